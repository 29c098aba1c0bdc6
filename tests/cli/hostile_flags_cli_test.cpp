#include "tests/cli/cli_fixture.hpp"

#include <gmock/gmock.h>
#include <string>
#include <vector>

// Flags a hostile or careless caller can push past what the process can
// carry: non-finite numbers, huge batches and worker counts, and secrets in
// a Redis address. Each is refused before anything is done (exit 2), with
// a message naming the flag or key and the limit, and no secret in it.

namespace outbox::test {
namespace {

/// An address nothing listens on: nothing here may get as far as Redis.
const std::string no_redis = "127.0.0.1:1";

class CliHostileFlags : public cli_fixture {
protected:
  /// `outbox status` (with `extra` flags) on a config file `name` holding
  /// `text`: it must be refused (exit 2) with `says` on stderr.
  process_result refused_config(const std::string& name,
                                const std::string& text,
                                const std::string& says,
                                const std::vector<std::string>& extra = {}) {
    auto r = outbox({"status", "--config", write_config(name, text)}, extra);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(says));
    return r;
  }
};

TEST_F(CliHostileFlags, StatusIntervalMustBeFinite) {
  for (auto value : {"nan", "NaN", "inf", "-inf", "1e999", "-nan"}) {
    auto r = outbox({"status", "--watch", "--interval", value},
                    {"--redis", no_redis});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("--interval"));
    EXPECT_THAT(r.err, testing::HasSubstr(
                           "must be a finite number between 0.05 and 3600"));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(CliHostileFlags, RunProbabilitiesMustBeFinite) {
  for (auto value : {"nan", "inf", "1e999"}) {
    auto r = outbox({"run", "--followup-share", value}, {"--redis", no_redis});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(
                           "run.followup_share: must be between 0 and 1"));
  }
}

TEST_F(CliHostileFlags, RetentionBatchesAreCapped) {
  const std::vector<std::vector<std::string>> commands = {
      {"trim", "--processed-older-than", "7d"},
      {"purge", "--published-older-than", "7d"}};
  for (auto args : commands) {
    for (auto batch : {"2147483647", "10001", "0"}) {
      auto call = args;
      call.insert(call.end(), {"--batch", batch});
      auto r = outbox(call, {"--redis", no_redis});
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << batch << ": " << r.err;
      EXPECT_NE(r.err.find("outbox " + args[0] +
                           ": --batch must be between 1 and 10000, got " +
                           batch),
                std::string::npos)
          << r.err;
    }
  }
}

TEST_F(CliHostileFlags, WorkerCountsAreCapped) {
  for (auto flag : {"--relays", "--consumers"}) {
    auto r = outbox({"run", flag, "100000"}, {"--redis", no_redis});
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    std::string key =
        flag == std::string{"--relays"} ? "run.relays" : "run.consumers";
    EXPECT_NE(r.err.find(key + ": must be between 0 and 64, got 100000"),
              std::string::npos)
        << r.err;
  }
  // The limit itself is accepted: refused later, for the missing Redis.
  auto at_limit = outbox({"run", "--relays", "64"}, {"--redis", no_redis});
  EXPECT_EQ(at_limit.exit_code, 1) << at_limit.err;
  EXPECT_THAT(at_limit.err, testing::Not(testing::HasSubstr("run.relays")));
}

TEST_F(CliHostileFlags, NoMessageShowsTheRedisPassword) {
  // Malformed: refused, quoted with the password masked.
  for (const std::string redis :
       {"u:s3cret@127.0.0.1:1", "127.0.0.1?password=s3cret:1",
        "redis://u:s3cret@127.0.0.1:1/x", "rediss://u:s3cret@127.0.0.1:1"}) {
    auto r = outbox({"status"}, {"--redis", redis});
    EXPECT_EQ(r.exit_code, 2) << redis << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("--redis"));
    EXPECT_THAT(r.err, testing::HasSubstr("***"));
    EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("s3cret")));
    EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("s3cret")));
  }
  auto named = outbox({"status"}, {"--redis", "redis://u:s3cret@h:1/x"});
  EXPECT_THAT(named.err, testing::HasSubstr("got 'redis://u:***@h:1/x'"));
  // Well formed, with nobody listening: the address is named, the password
  // is not.
  for (const std::string redis :
       {"redis://u:s3cret@127.0.0.1:1", "redis://s3cret@127.0.0.1:1"}) {
    // dead-letters reads Redis only: no database needed to get there.
    auto r = outbox({"dead-letters"}, {"--redis", redis});
    EXPECT_EQ(r.exit_code, 1) << redis << ": " << r.err;
    EXPECT_NE((r.out + r.err).find("127.0.0.1:1"), std::string::npos)
        << r.out << r.err;
    EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("s3cret")));
    EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("s3cret")));
  }

  // The same address written into a config file.
  auto r = refused_config(
      "secret.json", R"({"redis": {"host": "redis://u:s3cret@127.0.0.1"}})",
      "redis.host: must be a host name or an IP address");
  EXPECT_THAT(r.err, testing::HasSubstr("redis://u:***@127.0.0.1"));
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("s3cret")));
}

TEST_F(CliHostileFlags, ChoiceValuesAreEchoedWithoutSecrets) {
  auto r = refused_config("choice.json",
                          R"({"db": {"synchronous": "redis://u:s3cret@h"}})",
                          "db.synchronous: must be one of FULL, NORMAL, OFF",
                          {"--redis", no_redis});
  // Echoed as written, the password masked.
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("s3cret")));
  EXPECT_THAT(r.err, testing::HasSubstr("\"redis://u:***@h\""));
}

} // namespace
} // namespace outbox::test
