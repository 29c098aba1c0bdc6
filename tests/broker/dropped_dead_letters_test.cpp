#include "broker/dropped_dead_letters.hpp"

#include "broker/broker_error.hpp"
#include "broker/dead_letter_drop.hpp"
#include "broker/server_time.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gmock/gmock.h>

#include <string>
#include <vector>

// The reader `outbox verify` uses for drop decisions, against a private
// Redis written by `drop` itself and by hand.

namespace outbox::test {
namespace {

using broker::read_dropped_dead_letters;

class BrokerDroppedDeadLetters : public inbox_fixture {
protected:
  void dead_letter(const std::string& entry) {
    conn().command({"RPUSH", names_.dead_letter,
                    dead_letter_record(entry, "effect failed")});
  }
};

TEST_F(BrokerDroppedDeadLetters, NoDecisionsIsAnEmptyMap) {
  EXPECT_TRUE(read_dropped_dead_letters(conn(), names_).empty());
  EXPECT_EQ(broker::count_dropped_dead_letters(conn(), names_), 0);
}

TEST_F(BrokerDroppedDeadLetters, ReturnsEachDroppedEventWithItsDecision) {
  dead_letter(order_placed("e-1", "order-1", 1, "kiwi", 2));
  dead_letter(order_placed("e-2", "order-2", 1, "fig", 1));
  dead_letter("not json");
  auto before = broker::server_time_ms(conn());
  broker::drop_dead_letters(conn(), names_, {{"e-1"}, false, "sku retired"});
  broker::drop_dead_letters(conn(), names_, {{"e-2"}, true, ""});
  auto after = broker::server_time_ms(conn());

  auto dropped = read_dropped_dead_letters(conn(), names_);
  ASSERT_EQ(dropped.size(), 2u) << "the malformed record names no event";
  const auto& first = dropped.at("e-1");
  EXPECT_EQ(first.reason, "sku retired");
  EXPECT_GE(first.dropped_at, before);
  EXPECT_LE(first.dropped_at, after);
  EXPECT_TRUE(first.problem.empty()) << first.problem;
  EXPECT_EQ(dropped.at("e-2").reason, "");
  EXPECT_GE(dropped.at("e-2").dropped_at, first.dropped_at);
  EXPECT_EQ(broker::count_dropped_dead_letters(conn(), names_), 3);
}

TEST_F(BrokerDroppedDeadLetters, AHandWrittenValueIsReadAsAProblemNotThrown) {
  auto key = names_.dead_letter_dropped();
  conn().command({"HSET", key, "e-x", "by hand", "e-y",
                  R"({"dropped_at":"soon","reason":"r"})"});
  auto dropped = read_dropped_dead_letters(conn(), names_);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped.at("e-x").problem, "not a JSON object");
  EXPECT_EQ(dropped.at("e-y").problem, "dropped_at is not an integer");
  EXPECT_EQ(dropped.at("e-y").reason, "r");
}

TEST_F(BrokerDroppedDeadLetters, ReadsPastOnePage) {
  auto key = names_.dead_letter_dropped();
  std::vector<std::string> hset{"HSET", key};
  for (int i = 0; i < 1500; ++i) {
    hset.push_back("e-" + std::to_string(i));
    hset.push_back(R"({"dropped_at":)" + std::to_string(i) + "}");
  }
  conn().command(hset);
  auto dropped = read_dropped_dead_letters(conn(), names_);
  ASSERT_EQ(dropped.size(), 1500u);
  EXPECT_EQ(dropped.at("e-1499").dropped_at, 1499);
}

TEST_F(BrokerDroppedDeadLetters, AKeyOfAnotherTypeThrows) {
  conn().command({"SET", names_.dead_letter_dropped(), "x"});
  EXPECT_THROW(read_dropped_dead_letters(conn(), names_), broker::broker_error);
  EXPECT_THROW(broker::count_dropped_dead_letters(conn(), names_),
               broker::broker_error);
}

} // namespace
} // namespace outbox::test
