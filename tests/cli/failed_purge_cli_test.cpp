#include "tests/cli/cli_fixture.hpp"
#include "tests/cli/hand_rows.hpp"

#include "storage/types.hpp"

#include <gmock/gmock.h>
#include <string>

namespace outbox::test {
namespace {

/// `outbox failed` and `outbox purge` on a database filled by hand.
class CliFailedPurge : public cli_fixture {
protected:
  void init() {
    auto r = outbox({"init"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void insert(const std::string& event_id, const std::string& aggregate_id,
              int seq, const std::string& status, storage::millis created_at,
              const std::string& error = "") {
    hand_row row{event_id, aggregate_id, seq, status, created_at};
    row.attempts = 8;
    row.last_error = error;
    insert_row(db_path(), row);
  }
};

} // namespace

TEST_F(CliFailedPurge, FailedListsEveryFailedRow) {
  init();
  std::string long_error(200, 'x');
  insert("ev-1", "order-1", 1, "FAILED", 1, "redis down\nsecond line");
  insert("ev-2", "order-2", 1, "PENDING", 2);
  insert("ev-3", "order-3", 1, "FAILED", 3, long_error);
  auto r = outbox({"failed", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("count"), 2);
  ASSERT_EQ(out.at("failed").size(), 2u);
  EXPECT_EQ(out.at("failed")[0].at("event_id"), "ev-1");
  EXPECT_EQ(out.at("failed")[0].at("aggregate_id"), "order-1");
  EXPECT_EQ(out.at("failed")[0].at("seq"), 1);
  EXPECT_EQ(out.at("failed")[0].at("attempts"), 8);
  EXPECT_EQ(out.at("failed")[1].at("last_error"), long_error);

  auto text = outbox({"failed"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, testing::HasSubstr("ev-1"));
  EXPECT_THAT(text.out, testing::HasSubstr("ev-3"));
  EXPECT_THAT(text.out, testing::Not(testing::HasSubstr("ev-2")));
  EXPECT_THAT(text.out, testing::Not(testing::HasSubstr(long_error)))
      << "cut in the table";
  EXPECT_THAT(text.out, testing::HasSubstr("..."));
  EXPECT_THAT(text.out, testing::HasSubstr("2 FAILED rows"));
}

TEST_F(CliFailedPurge, FailedSaysSoWhenThereAreNone) {
  init();
  auto r = outbox({"failed"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr("no FAILED rows"));
  auto json = outbox({"failed", "--json"});
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_EQ(json_of(json).at("count"), 0);
}

TEST_F(CliFailedPurge, PurgeDeletesOldPublishedRows) {
  init();
  auto now = storage::wall_clock_now();
  for (int seq = 1; seq <= 5; ++seq)
    insert("old-" + std::to_string(seq), "order-1", seq, "PUBLISHED", 1000);
  insert("new-6", "order-1", 6, "PUBLISHED", now);
  insert("failed", "order-2", 1, "FAILED", 1000, "boom");
  auto r = outbox(
      {"purge", "--published-older-than", "1d", "--batch", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("deleted"), 5);
  EXPECT_GE(out.at("batches").get<int>(), 3);
  auto cutoff = out.at("cutoff").get<std::int64_t>();
  EXPECT_GE(cutoff, now - 86'400'000);
  EXPECT_LT(cutoff, now - 86'400'000 + 60'000);
  EXPECT_EQ(count("outbox"), 2);

  // new-6 was published at `now`: an hour keeps it however slow the
  // processes above were.
  auto text = outbox({"purge", "--published-older-than", "1h"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, testing::HasSubstr("deleted 0"));
}

TEST_F(CliFailedPurge, PurgeRefusesBadDurationsAndBatches) {
  init();
  for (std::string bad :
       {"7", "7x", "d", "-1d", "1.5h", "", "7 d", "99999999999999999999d"}) {
    auto r = outbox({"purge", "--published-older-than", bad});
    EXPECT_EQ(r.exit_code, 2) << "'" << bad << "': " << r.err;
    EXPECT_NE(r.err.find("'" + bad + "'"), std::string::npos) << r.err;
  }
  auto r = outbox({"purge", "--published-older-than", "1d", "--batch", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("--batch"));
  EXPECT_NE(r.err.find('0'), std::string::npos) << r.err;
  auto missing = outbox({"purge"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST_F(CliFailedPurge, MissingDatabaseIsRefused) {
  for (const auto& command : {std::vector<std::string>{"failed"},
                              {"purge", "--published-older-than", "1d"}}) {
    auto r = outbox(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("outbox init"));
  }
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

} // namespace outbox::test
