// The lab as a whole: the student's sequence step by step, and the full lab
// (no --step) twice into fresh folders against one Redis.

#include "tests/lab/lab_fixture.hpp"

#include <gmock/gmock.h>

namespace outbox::test {
namespace {

using LabSequence = lab_fixture;

TEST_F(LabSequence, StudentSequenceMeetsEverySeedCondition) {
  // An older lab's leftovers in Redis: init of a new lab resets them.
  redis().command({"RPUSH", "outbox.events", "stale"});
  redis().command({"HSET", "processed", "stale-event", "{}"});

  step_ok("init");
  EXPECT_EQ(queue_length(), 0);
  EXPECT_EQ(processed_size(), 0);
  step_ok("dualwrite");
  ASSERT_FALSE(lines_of("dualwrite.out").empty());
  EXPECT_EQ(lines_of("dualwrite.out")[0], "INCONSISTENT orders=1 published=0");

  for (int run = 0; run < 3; ++run)
    step_ok("place_order");
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM orders"), 3);
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox"), 3);

  step_ok("relay");
  EXPECT_EQ(queue_length(), 3);
  step_ok("relay");
  EXPECT_EQ(queue_length(), 3);

  step_ok("order_check");
  EXPECT_EQ(lines_of("order_check.out"), std::vector<std::string>{"ORDER OK"});

  step_ok("relay_crash");
  auto duplicate = lines_of("atleastonce.out");
  ASSERT_EQ(duplicate.size(), 1u);
  EXPECT_EQ(duplicate[0].rfind("DUPLICATE event_id=", 0), 0u) << duplicate[0];
  EXPECT_EQ(duplicate[0].substr(duplicate[0].size() - 8), " count=2");

  step_ok("consumer");
  EXPECT_EQ(queue_length(), 0);
  auto unique = app_db_number("SELECT COUNT(*) FROM outbox");
  EXPECT_EQ(processed_size(), unique);
  step_ok("consumer");
  EXPECT_EQ(processed_size(), unique);

  step_ok("report");
  EXPECT_EQ(lines_of("report.txt"),
            (std::vector<std::string>{"orders=5", "outbox=8", "enqueued=9",
                                      "processed_unique=8"}));
}

TEST_F(LabSequence, FullLabTwiceIntoFreshFoldersGivesTheSameReport) {
  const std::vector<std::string> expected{"orders=5", "outbox=8", "enqueued=9",
                                          "processed_unique=8"};
  auto first_dir = tmp_.file("first");
  auto first = lab_all(first_dir);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(lines_of("report.txt", first_dir), expected);

  auto second_dir = tmp_.file("second");
  auto second = lab_all(second_dir);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  // It said what it reset, and the first lab's keys were among them.
  EXPECT_THAT(second.out, testing::HasSubstr("Resetting"));
  EXPECT_THAT(second.out, testing::HasSubstr("DEL outbox.events processed"));
  EXPECT_EQ(lines_of("report.txt", second_dir), expected);
  for (auto name : {"dualwrite.out", "order_check.out", "atleastonce.out"})
    EXPECT_FALSE(lines_of(name, second_dir).empty()) << name;
  EXPECT_EQ(lines_of("order_check.out", second_dir),
            std::vector<std::string>{"ORDER OK"});
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM orders", second_dir), 5);
  EXPECT_EQ(processed_size(), 8);
  EXPECT_EQ(queue_length(), 0);

  // Once more into the first folder: its files are reset too.
  auto again = lab_all(first_dir);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(lines_of("report.txt", first_dir), expected);
  EXPECT_EQ(lines_of("dualwrite.out", first_dir)[0],
            "INCONSISTENT orders=1 published=0");
}

} // namespace
} // namespace outbox::test
