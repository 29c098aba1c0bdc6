#include "broker/dead_letters.hpp"

#include "broker/broker_error.hpp"
#include "broker/inbox.hpp"
#include "tests/broker/dead_letter_fixture.hpp"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// Reading the dead-letter list and replaying entries onto their queues,
// against a private Redis.

namespace outbox::test {
namespace {

using broker::replay_dead_letters;

class BrokerDeadLetters : public dead_letter_fixture {
protected:
  void SetUp() override {
    dead_letter_fixture::SetUp();
    names_.partitions = 4;
  }

  /// Two aggregates that land on different queues.
  std::string a1_ = "order-1";
  std::string a2_ = find_other_queue(a1_);

  std::string find_other_queue(const std::string& aggregate) {
    broker::keys four;
    four.partitions = 4;
    for (int i = 2;; ++i) {
      auto other = "order-" + std::to_string(i);
      if (four.queue_for(other) != four.queue_for(aggregate))
        return other;
    }
  }
};

TEST_F(BrokerDeadLetters, ReadsEveryRecordOldestFirstJunkIncluded) {
  broker::inbox box{conn(), names_};
  box.apply_batch({"not json", follow_up("e-1", a1_, 0, "OrderPaid")});
  dead_letter("someone pushed this");
  auto letters = broker::read_dead_letters(conn(), names_);
  ASSERT_EQ(letters.size(), 3u);
  EXPECT_EQ(letters[0].index, 0u);
  EXPECT_EQ(letters[0].reason, "entry is not valid JSON");
  EXPECT_EQ(letters[0].entry, "not json");
  EXPECT_FALSE(letters[0].replayable());
  EXPECT_EQ(letters[1].event_id, "e-1");
  EXPECT_EQ(letters[1].reason, "seq must be an integer >= 1 (at most 2^53)");
  EXPECT_FALSE(letters[1].replayable());
  EXPECT_EQ(letters[2].index, 2u);
  EXPECT_EQ(letters[2].record_problem, "record is not valid JSON");
}

TEST_F(BrokerDeadLetters, ReplayPutsEntriesAtTheHeadOfTheirQueueInOrder) {
  auto queue = names_.queue_for(a1_);
  conn().command({"RPUSH", queue, "queued-1", "queued-2"});
  auto first = order_placed("e-1", a1_, 1, "kiwi", 2);
  auto second = follow_up("e-2", a1_, 2, "OrderPaid");
  auto other = order_placed("e-3", a2_, 1, "fig", 1);
  dead_letter(record_of(first));
  dead_letter("junk");
  dead_letter(record_of(other));
  dead_letter(record_of(second));

  auto result = replay_dead_letters(conn(), names_, {{"e-2", "e-1"}, false});
  EXPECT_TRUE(result.refused.empty());
  ASSERT_EQ(result.replayed.size(), 2u);
  EXPECT_EQ(result.replayed[0].letter.event_id, "e-1");
  EXPECT_EQ(result.replayed[0].queue, queue);
  EXPECT_EQ(result.replayed[1].letter.event_id, "e-2");

  EXPECT_EQ(list(queue),
            (std::vector<std::string>{first, second, "queued-1", "queued-2"}));
  EXPECT_EQ(dead_letters(),
            (std::vector<std::string>{"junk", record_of(other)}));
  EXPECT_EQ(list(names_.doorbell_for(queue)), std::vector<std::string>{"1"});
  EXPECT_TRUE(list(names_.queue_for(a2_)).empty());
}

TEST_F(BrokerDeadLetters, AllReplaysWhatItCanAndReportsTheRest) {
  auto first = order_placed("e-1", a1_, 1, "kiwi", 2);
  auto other = order_placed("e-3", a2_, 1, "fig", 1);
  auto huge = order_placed("e-4", a1_, 2, "kiwi", 1);
  dead_letter(record_of(first));
  dead_letter("junk");
  dead_letter(record_of(huge.substr(0, 50), {{"truncated", true}}));
  dead_letter(record_of(other));

  auto result = replay_dead_letters(conn(), names_, {{}, true});
  ASSERT_EQ(result.replayed.size(), 2u);
  EXPECT_EQ(result.replayed[0].letter.index, 0u);
  EXPECT_EQ(result.replayed[1].letter.index, 3u);
  ASSERT_EQ(result.skipped.size(), 2u);
  EXPECT_EQ(result.skipped[0].index, 1u);
  EXPECT_EQ(result.skipped[1].event_id, "e-4");
  EXPECT_THAT(result.skipped[1].why, testing::HasSubstr("truncated"));
  EXPECT_EQ(list(names_.queue_for(a1_)), std::vector<std::string>{first});
  EXPECT_EQ(list(names_.queue_for(a2_)), std::vector<std::string>{other});
  EXPECT_EQ(dead_letters().size(), 2u);
  EXPECT_EQ(list(names_.doorbell_for(names_.queue_for(a2_))),
            std::vector<std::string>{"1"});

  // Nothing replayable left: nothing happens.
  auto again = replay_dead_letters(conn(), names_, {{}, true});
  EXPECT_TRUE(again.replayed.empty());
  EXPECT_EQ(again.skipped.size(), 2u);
  EXPECT_EQ(dead_letters().size(), 2u);
}

TEST_F(BrokerDeadLetters, ATruncatedOrUnknownNameChangesNothing) {
  auto first = order_placed("e-1", a1_, 1, "kiwi", 2);
  auto huge = order_placed("e-4", a1_, 2, "kiwi", 1);
  dead_letter(record_of(first));
  dead_letter(record_of(huge.substr(0, 50), {{"truncated", true}}));
  auto before = dead_letters();

  auto truncated = replay_dead_letters(conn(), names_, {{"e-1", "e-4"}, false});
  EXPECT_TRUE(truncated.replayed.empty());
  ASSERT_EQ(truncated.refused.size(), 1u);
  EXPECT_EQ(truncated.refused[0].event_id, "e-4");
  EXPECT_EQ(truncated.refused[0].index, 1u);

  auto unknown =
      replay_dead_letters(conn(), names_, {{"e-1", "nope", "nope"}, false});
  EXPECT_TRUE(unknown.replayed.empty());
  ASSERT_EQ(unknown.refused.size(), 1u);
  EXPECT_EQ(unknown.refused[0].event_id, "nope");
  EXPECT_FALSE(unknown.refused[0].index);

  EXPECT_EQ(dead_letters(), before);
  EXPECT_TRUE(list(names_.queue_for(a1_)).empty());
}

TEST_F(BrokerDeadLetters, IdenticalRecordsOfOneEventAreAllReplayed) {
  auto first = order_placed("e-1", a1_, 1, "kiwi", 2);
  dead_letter(record_of(first));
  dead_letter(record_of(first));
  auto result = replay_dead_letters(conn(), names_, {{"e-1"}, false});
  EXPECT_EQ(result.replayed.size(), 2u);
  EXPECT_TRUE(dead_letters().empty());
  EXPECT_EQ(list(names_.queue_for(a1_)),
            (std::vector<std::string>{first, first}));

  // Through the inbox as usual: the second copy is a duplicate.
  broker::inbox box{conn(), names_};
  auto outcomes = box.apply_batch(list(names_.queue_for(a1_)));
  EXPECT_EQ(outcomes[0].result, outcome::applied);
  EXPECT_EQ(outcomes[1].result, outcome::duplicate);
  EXPECT_EQ(reserved("kiwi"), 2);
}

TEST_F(BrokerDeadLetters, AWrongTypedQueueFailsTheCallWithoutAnyChange) {
  auto first = order_placed("e-1", a1_, 1, "kiwi", 2);
  dead_letter(record_of(first));
  conn().command({"SET", names_.queue_for(a1_), "not a list"});
  EXPECT_THROW(replay_dead_letters(conn(), names_, {{"e-1"}, false}),
               broker::broker_error);
  EXPECT_EQ(dead_letters(), std::vector<std::string>{record_of(first)});
}

} // namespace
} // namespace outbox::test
