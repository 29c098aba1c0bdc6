// OUTBOX_REDIS names the Redis when --redis does not: --redis beats it, and
// it beats the config file (what scripts/run relies on to point outbox at
// its private Redis). A malformed value is a configuration error naming it.

#include "support/redis_server.hpp"
#include "tests/cli/cli_fixture.hpp"

#include <string>
#include <vector>

namespace outbox::test {
namespace {

class CliRedisEnv : public cli_fixture {
protected:
  void SetUp() override {
    ASSERT_EQ(run_outbox({"init", "--db", db_path()}).exit_code, 0);
    // The config file names a port where nothing listens.
    config_ = write_config("dead.json", R"({"redis": {"port": )" +
                                            std::to_string(dead_port_) +
                                            R"(, "connect_timeout_ms": 300}})");
  }

  /// `outbox status` with OUTBOX_REDIS=`value` (unset when null) and `args`.
  process_result status(const char* value,
                        const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv{"/usr/bin/env", "-u", "OUTBOX_REDIS"};
    if (value)
      argv.push_back(std::string{"OUTBOX_REDIS="} + value);
    std::vector<std::string> command{"status", "--db", db_path(), "--config",
                                     config_};
    command.insert(command.end(), args.begin(), args.end());
    auto outbox = outbox_argv(command);
    argv.insert(argv.end(), outbox.begin(), outbox.end());
    return run_process(argv, dir_.path().string());
  }

  std::string live() const { return redis_.endpoint().to_string(); }
  std::string dead() const { return "127.0.0.1:" + std::to_string(dead_port_); }

  redis_server redis_;
  int dead_port_ = free_loopback_port();
  std::string config_;
};

TEST_F(CliRedisEnv, ItBeatsTheConfigFile) {
  auto file_only = status(nullptr);
  EXPECT_EQ(file_only.exit_code, 1) << file_only.out << file_only.err;
  EXPECT_NE((file_only.out + file_only.err).find(dead()), std::string::npos)
      << file_only.out << file_only.err;
  auto from_env = status(live().c_str());
  EXPECT_EQ(from_env.exit_code, 0) << from_env.out << from_env.err;
  // Empty counts as unset: the config file's again.
  EXPECT_EQ(status("").exit_code, 1);
}

TEST_F(CliRedisEnv, TheFlagBeatsIt) {
  auto r = status(live().c_str(), {"--redis", dead()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // Not even read when the flag is given.
  auto malformed = status("nonsense", {"--redis", live()});
  EXPECT_EQ(malformed.exit_code, 0) << malformed.out << malformed.err;
}

TEST_F(CliRedisEnv, AMalformedValueIsAConfigurationErrorNamingIt) {
  for (const char* value : {"nonsense", "127.0.0.1:0", "host:65536", ":6390"}) {
    auto r = status(value);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find(std::string{"configuration error: OUTBOX_REDIS: "
                                     "expected HOST:PORT (a host name or an "
                                     "IP address and a port in 1..65535) or "
                                     "redis://[USER:PASSWORD@]HOST[:PORT][/"
                                     "DB], got '"} +
                         value + "'"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

} // namespace
} // namespace outbox::test
