#include "tests/cli/audit_fixture.hpp"
#include "tests/cli/status_tables.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gmock/gmock.h>

#include <string>

// `outbox status` shows how long ago a lease was claimed from the claim
// time the database stored, not from lease_until minus the lease.ttl_ms of
// the status's own config: a ttl changed between the claim and the status
// (a relay still running with the old one) must not move the claim.

namespace outbox::test {
namespace {

using CliStatusClaimTime = CliAudit;

/// `owner`'s leases, claimed a moment ago, as `outbox status --json` and
/// the LAST CLAIM cell of `outbox status` show them.
void expect_claimed_just_now(const std::string& owner,
                             const process_result& json,
                             const process_result& text) {
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto out = nlohmann::json::parse(json.out);
  const auto& leases = out.at("outbox").at("leases");
  ASSERT_EQ(leases.size(), 1u) << json.out;
  auto age = leases[0].at("last_claim_age_ms").get<std::int64_t>();
  EXPECT_GE(age, 0);
  EXPECT_LT(age, 8'000);

  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto row = row_of(table_titled(text.out, "LEASE OWNER (RELAY)"), owner);
  ASSERT_EQ(row.size(), 6u) << text.out;
  EXPECT_EQ(row[2].size() > 4 ? row[2].substr(row[2].size() - 4) : row[2],
            " ago")
      << text.out;
}

TEST_F(CliStatusClaimTime, ALongerLeaseThanTheStatussTtlIsNotAClaimToCome) {
  place("apple", 2);
  // Claimed under a 60 s lease, read under the default 10 s: inferred, the
  // claim would lie 50 s in the future.
  claim_all("relay-long", 60'000);
  expect_claimed_just_now("relay-long", outbox_r({"status", "--json"}),
                          outbox_r({"status"}));
}

TEST_F(CliStatusClaimTime, AShorterLeaseThanTheStatussTtlIsNotAnOldClaim) {
  place("apple", 2);
  // Claimed under a 2 s lease, read under 120 s: inferred, the claim would
  // lie nearly two minutes back.
  claim_all("relay-short", 2'000);
  auto config = write_config("long.json", R"({"lease": {"ttl_ms": 120000}})");
  expect_claimed_just_now("relay-short",
                          outbox_r({"status", "--json", "--config", config}),
                          outbox_r({"status", "--config", config}));
}

TEST_F(CliStatusClaimTime, ALeaseWithoutClaimTimeStillShowsARelayAtWork) {
  place("apple", 2);
  claim_all("relay-old", 60'000);
  {
    // As a relay of a version before the claim time leaves its leases,
    // running on through a rolling deploy (and sending no heartbeat).
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("UPDATE outbox SET claimed_at = NULL");
  }
  auto r = outbox_r({"status", "--check", "--json"});
  auto out = nlohmann::json::parse(r.out);
  EXPECT_TRUE(
      out.at("outbox").at("leases").at(0).at("last_claim_age_ms").is_null())
      << r.out;
  // Its live lease counts from its expiry: not a pipeline without relays.
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("no relay")));
}

} // namespace
} // namespace outbox::test
