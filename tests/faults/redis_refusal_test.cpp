#include "tests/faults/fault_fixture.hpp"

#include <gmock/gmock.h>

#include <chrono>
#include <sstream>
#include <thread>

namespace outbox::test {
namespace {

constexpr const char* refusal_app_password = "Rf3-app-pw";

redis_server::options refusal_acl_server() {
  redis_server::options opts;
  // The fixture itself stays Redis's `default` user (no password): the
  // administrator who changes the application's ACL mid-run.
  opts.config_lines = {std::string{"user app on >"} + refusal_app_password +
                       " ~* &* +@all"};
  return opts;
}

/// Scenario: Redis answers, but refuses the pipeline's commands in words
/// that name no server state: an ACL that lost a command the relays or
/// consumers need. Waiting does not end it. Relays hand their rows back
/// uncharged and retry, as for an outage, but a bounded run stalls, and
/// its stall reason names the refusal in Redis's words; an unbounded run
/// keeps retrying and says so once.
class FaultRedisRefusal : public fault_fixture {
protected:
  FaultRedisRefusal() : fault_fixture(refusal_acl_server()) {}

  void SetUp() override {
    fault_fixture::SetUp();
    // Three attempts and short backoffs: a row charged for the refusal
    // would be FAILED within a fraction of a second. Leases of 1.5 s: a
    // takeover charges an attempt (the holder may have died of the row),
    // and a relay slowed past a short lease on a loaded machine would be
    // charged for that, not for the ACL.
    write_config(
        {{"redis", {{"username", "app"}, {"password", refusal_app_password}}},
         {"lease",
          {{"ttl_ms", 1500},
           {"max_attempts", 3},
           {"backoff_base_ms", 10},
           {"backoff_max_ms", 40}}}});
  }

  void acl(const std::vector<std::string>& rules) {
    std::vector<std::string> argv{"ACL", "SETUSER", "app"};
    argv.insert(argv.end(), rules.begin(), rules.end());
    redis().command(argv);
  }

  /// `outbox run` with `relays` relays and one consumer placing `orders`
  /// orders at 100 a second from the scenario's seed; bounded by
  /// --until-drained when `until_drained`.
  std::unique_ptr<child_process> start_paced_run(const std::string& relays,
                                                 const std::string& orders,
                                                 bool until_drained) const {
    return start_run({"--relays", relays, "--consumers", "1", "--orders",
                      orders, "--rate", "100", "--seed", std::to_string(seed_)},
                     until_drained);
  }

  /// Waits (bounded) until `rows` rows are PUBLISHED: the run is under way
  /// with the full ACL.
  bool published_at_least(std::int64_t rows) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (count("SELECT COUNT(*) FROM outbox WHERE status = 'PUBLISHED'") >=
          rows)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::int64_t charged_rows() const {
    return count("SELECT COUNT(*) FROM outbox WHERE status = 'FAILED' "
                 "OR (status = 'PENDING' AND attempts > 0)");
  }

  /// Lines of `err` at warn that hold `text` (the progress lines, which
  /// show it too, are not log lines).
  static int warn_lines(const std::string& err, const std::string& text) {
    int lines = 0;
    std::istringstream in{err};
    for (std::string line; std::getline(in, line);)
      if (line.find("[warning]") != std::string::npos &&
          line.find(text) != std::string::npos)
        ++lines;
    return lines;
  }

  std::string refusal(const std::string& words) const {
    return "Redis at " + redis_->endpoint().to_string() +
           " refuses the pipeline's commands: " + words +
           " (not an outage: fix the ACL or the proxy)";
  }
};

TEST_F(FaultRedisRefusal, ABoundedRunWhoseRelaysLoseACommandEndsNamingIt) {
  auto run = start_paced_run("2", "400", true);
  ASSERT_TRUE(published_at_least(10)) << "the run never published";
  acl({"-rpush"});

  // The stall limit of this config is about 4 s; a run retrying the
  // refusal as an outage would never end.
  auto r = run->wait(60'000);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto named =
      refusal("NOPERM this user has no permissions to run the 'rpush' command");
  EXPECT_THAT(r.err, testing::HasSubstr("outbox run: invariants violated: "
                                        "stalled: " +
                                        named))
      << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr(refusal_app_password)));
  auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  EXPECT_FALSE(report.value("ok", true));
  EXPECT_EQ(report.value("failed_rows", -1), 0);
  EXPECT_EQ(charged_rows(), 0) << "rows paid attempts for an ACL";
  EXPECT_GT(count("SELECT COUNT(*) FROM outbox WHERE status = 'PENDING'"), 0);

  // Once the ACL is fixed, the same pipeline drains.
  acl({"+rpush"});
  auto again = start_run({"--relays", "2", "--consumers", "1"}, true);
  auto done = again->wait(60'000);
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
  auto check = finish("FaultRedisRefusal.relays", 0);
  EXPECT_EQ(check.figures.failed_rows, 0);
  EXPECT_EQ(check.figures.published, check.figures.outbox_rows);
}

TEST_F(FaultRedisRefusal, AnUnboundedRunKeepsRetryingAndSaysItOnce) {
  auto run = start_paced_run("1", "200", false);
  ASSERT_TRUE(published_at_least(10)) << "the run never published";
  // The consumers' scripts and the consumers' lock run through EVALSHA.
  acl({"-evalsha"});
  auto named = refusal(
      "NOPERM this user has no permissions to run the 'evalsha' command");
  ASSERT_TRUE(run->wait_for_stderr(named, 30'000))
      << "the run never named the refusal";
  // Past two stall limits (about 4 s each), it still runs.
  EXPECT_FALSE(run->exited_within(9000)) << "an unbounded run gave up";

  acl({"+evalsha"});
  process_result raw;
  stop_gracefully(*run, "the unbounded run", &raw);
  EXPECT_EQ(warn_lines(raw.err, named), 1) << raw.err;
  EXPECT_EQ(charged_rows(), 0);
}

} // namespace
} // namespace outbox::test
