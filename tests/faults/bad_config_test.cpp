// Scenario 8 of the fault suite: bad configuration files and flags, through
// the real binary. Every case must exit 2 with a message naming the key,
// flag or file that is wrong, and create nothing: no database file, no
// folder.

#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// Where --config points.
enum class config_source {
  /// No --config at all (flags only).
  none,
  /// A file holding `text`.
  file,
  /// A path where nothing exists.
  missing,
  /// A folder: it opens, but cannot be read.
  folder,
  /// A device that never ends.
  endless,
};

struct bad_input {
  const char* name;
  /// The command and its flags (common flags are added).
  std::vector<std::string> command;
  config_source source = config_source::none;
  std::string text;
  /// What stderr must contain: the key or flag; "<config>" stands for the
  /// config file's path.
  std::vector<std::string> mentions;
};

std::ostream& operator<<(std::ostream& out, const bad_input& c) {
  return out << c.name;
}

const std::vector<std::string> run = {"run", "--until-drained", "--relays",
                                      "1"};

std::vector<std::string> run_with(std::vector<std::string> flags) {
  auto command = run;
  command.insert(command.end(), flags.begin(), flags.end());
  return command;
}

const std::vector<bad_input> bad_inputs = {
    // Config files: wrong types.
    {"string_for_count",
     run,
     config_source::file,
     R"({"lease": {"batch": "256"}})",
     {"lease.batch", "expected an integer"}},
    {"bool_for_count",
     run,
     config_source::file,
     R"({"run": {"relays": true}})",
     {"run.relays", "expected an integer"}},
    {"number_for_path",
     run,
     config_source::file,
     R"({"db": {"path": 5}})",
     {"db.path", "expected a string"}},
    {"null_port",
     run,
     config_source::file,
     R"({"redis": {"port": null}})",
     {"redis.port", "null"}},
    {"text_for_entry_limit",
     run,
     config_source::file,
     R"({"broker": {"max_entry_bytes": "1MB"}})",
     {"broker.max_entry_bytes"}},
    // Negative and out-of-range counts.
    {"negative_relays",
     run,
     config_source::file,
     R"({"run": {"relays": -1}})",
     {"run.relays", "between 0 and 64"}},
    {"negative_consumers",
     run,
     config_source::file,
     R"({"run": {"consumers": -2}})",
     {"run.consumers"}},
    {"negative_orders",
     run,
     config_source::file,
     R"({"run": {"orders": -5}})",
     {"run.orders"}},
    {"zero_batch",
     run,
     config_source::file,
     R"({"lease": {"batch": 0}})",
     {"lease.batch"}},
    {"port_70000",
     run,
     config_source::file,
     R"({"redis": {"port": 70000}})",
     {"redis.port", "65535"}},
    {"tiny_entry_limit",
     run,
     config_source::file,
     R"({"broker": {"max_entry_bytes": 10}})",
     {"broker.max_entry_bytes", "1024"}},
    // A consumer limit below the publishing limit would dead-letter,
    // unreplayable, entries the relays of this very config publish.
    {"consume_limit_below_entry_limit",
     run,
     config_source::file,
     R"({"broker": {"max_entry_bytes": 4194304, "max_consume_bytes": 1048576}})",
     {"broker.max_consume_bytes", "broker.max_entry_bytes (4194304)",
      "1048576"}},
    {"entry_limit_above_default_consume_limit",
     run,
     config_source::file,
     R"({"broker": {"max_entry_bytes": 33554432}})",
     {"broker.max_consume_bytes", "broker.max_entry_bytes (33554432)"}},
    {"bad_synchronous",
     run,
     config_source::file,
     R"({"db": {"synchronous": "fast"}})",
     {"db.synchronous", "FULL"}},
    // Unknown and duplicate keys.
    {"unknown_key",
     run,
     config_source::file,
     R"({"lease": {"ttl": 5000}})",
     {"lease.ttl", "did you mean lease.ttl_ms"}},
    {"unknown_section",
     run,
     config_source::file,
     R"({"leese": {}})",
     {"leese", "unknown section"}},
    {"duplicate_key",
     run,
     config_source::file,
     R"({"lease": {"batch": 1, "batch": 2}})",
     {"lease.batch", "duplicate"}},
    // Rules between keys.
    {"ttl_shorter_than_poll",
     run,
     config_source::file,
     R"({"lease": {"ttl_ms": 200}, "run": {"poll_interval_ms": 500}})",
     {"lease.ttl_ms", "run.poll_interval_ms"}},
    {"ttl_of_one_lock_renewal",
     run,
     config_source::file,
     R"({"lease": {"ttl_ms": 100}, "run": {"poll_interval_ms": 10}})",
     {"lease.ttl_ms", "at least 300", "got 100"}},
    {"ttl_not_above_store_timeouts",
     run,
     config_source::file,
     R"({"db": {"busy_timeout_ms": 2000}, "redis": {"io_timeout_ms": 1000},
         "lease": {"ttl_ms": 3000}})",
     {"lease.ttl_ms", "db.busy_timeout_ms (2000)", "redis.io_timeout_ms (1000)",
      "got 3000"}},
    {"busy_timeout_raised_past_the_ttl",
     {"place-order", "--sku", "apple", "--qty", "1"},
     config_source::file,
     R"({"db": {"busy_timeout_ms": 60000}})",
     {"lease.ttl_ms", "db.busy_timeout_ms (60000)"}},
    {"switch_as_text",
     run,
     config_source::file,
     R"({"redis": {"allow_evicting": "true"}})",
     {"redis.allow_evicting", "expected true or false"}},
    {"backoff_base_above_max",
     run,
     config_source::file,
     R"({"lease": {"backoff_base_ms": 5000, "backoff_max_ms": 1000}})",
     {"lease.backoff_base_ms"}},
    {"io_timeout_not_above_block",
     run,
     config_source::file,
     R"({"redis": {"io_timeout_ms": 100}, "run": {"consumer_block_ms": 200}})",
     {"redis.io_timeout_ms"}},
    {"shared_key_names",
     run,
     config_source::file,
     R"({"broker": {"processed": "outbox.events"}})",
     {"broker.processed", "broker.queue"}},
    // Probabilities outside [0, 1].
    {"probability_above_one",
     run,
     config_source::file,
     R"({"crash": {"relay_pause": 1.5}})",
     {"crash.relay_pause", "between 0 and 1"}},
    {"probability_negative",
     run,
     config_source::file,
     R"({"crash": {"consumer_after_pop": -0.1}})",
     {"crash.consumer_after_pop"}},
    {"share_above_one",
     run,
     config_source::file,
     R"({"run": {"followup_share": 2}})",
     {"run.followup_share"}},
    // The file itself.
    {"invalid_json",
     run,
     config_source::file,
     R"({"lease": {"ttl_ms": )",
     {"<config>", "invalid JSON"}},
    {"empty_file", run, config_source::file, "", {"<config>", "invalid JSON"}},
    {"top_level_array",
     run,
     config_source::file,
     "[1, 2]",
     {"<config>", "JSON object"}},
    {"missing_file",
     run,
     config_source::missing,
     "",
     {"<config>", "No such file"}},
    {"unreadable_file",
     run,
     config_source::folder,
     "",
     {"<config>", "cannot read"}},
    {"endless_file",
     run,
     config_source::endless,
     "",
     {"<config>", "too large"}},
    // Flags.
    {"redis_without_port",
     run_with({"--redis", "localhost"}),
     config_source::none,
     "",
     {"--redis", "HOST:PORT"}},
    {"redis_port_zero",
     run_with({"--redis", "127.0.0.1:0"}),
     config_source::none,
     "",
     {"--redis"}},
    {"redis_port_too_big",
     run_with({"--redis", "127.0.0.1:99999"}),
     config_source::none,
     "",
     {"--redis"}},
    {"redis_port_not_a_number",
     run_with({"--redis", "127.0.0.1:six"}),
     config_source::none,
     "",
     {"--redis"}},
    {"bad_log_level",
     run_with({"--log-level", "loud"}),
     config_source::none,
     "",
     {"--log-level", "loud"}},
    {"partitions_zero",
     run_with({"--partitions", "0"}),
     config_source::none,
     "",
     {"partitions"}},
    // Negative values for unsigned flags come back as the key's range error.
    {"partitions_negative",
     run_with({"--partitions", "-1"}),
     config_source::none,
     "",
     {"broker.partitions", "got -1"}},
    {"partitions_too_many",
     run_with({"--partitions", "5000"}),
     config_source::none,
     "",
     {"partitions", "1024"}},
    {"relays_negative",
     run_with({"--consumers", "1", "--relays", "-1"}),
     config_source::none,
     "",
     {"relays"}},
    {"relays_not_a_number",
     run_with({"--relays", "two"}),
     config_source::none,
     "",
     {"--relays"}},
    {"consumers_negative",
     run_with({"--consumers", "-3"}),
     config_source::none,
     "",
     {"consumers"}},
    {"orders_negative",
     run_with({"--orders", "-5"}),
     config_source::none,
     "",
     {"orders"}},
    {"crash_probability_above_one",
     run_with({"--crash-relay-pause", "1.5"}),
     config_source::none,
     "",
     {"relay_pause"}},
    {"crash_probability_negative",
     run_with({"--crash-consumer-after-effect", "-0.2"}),
     config_source::none,
     "",
     {"consumer_after_effect"}},
    {"followup_share_flag",
     run_with({"--followup-share", "2"}),
     config_source::none,
     "",
     {"followup_share"}},
    {"seed_negative",
     run_with({"--seed", "-1"}),
     config_source::none,
     "",
     {"crash.seed", "got -1"}},
    {"unknown_flag",
     run_with({"--relay", "2"}),
     config_source::none,
     "",
     {"--relay"}},
    {"empty_db_flag",
     run_with({"--db", ""}),
     config_source::none,
     "",
     {"--db"}},
    // Other commands read the same config: they refuse it the same way.
    {"init_with_bad_config",
     {"init"},
     config_source::file,
     R"({"db": {"busy_timeout_ms": -1}})",
     {"db.busy_timeout_ms"}},
    {"place_order_with_bad_config",
     {"place-order", "--sku", "apple", "--qty", "1"},
     config_source::file,
     R"({"lease": {"max_attempts": 0}})",
     {"lease.max_attempts"}},
};

class FaultBadConfig : public ::testing::TestWithParam<bad_input> {
protected:
  /// Everything under `root`, as relative paths.
  static std::vector<std::string> listing(const fs::path& root) {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator{root})
      names.push_back(fs::relative(entry.path(), root).string());
    std::sort(names.begin(), names.end());
    return names;
  }

  temp_dir dir_{"outbox-badconfig"};
};

TEST_P(FaultBadConfig, ExitsTwoNamingTheCulpritAndCreatesNothing) {
  const auto& c = GetParam();
  // The command runs in an empty folder, so a database created at a
  // default relative path (var/outbox.db) would show up here too.
  auto work = dir_.path() / "work";
  fs::create_directory(work);
  auto db = (work / "app.db").string();
  std::string config;
  switch (c.source) {
  case config_source::none:
    break;
  case config_source::file:
    config = dir_.file("bad.json");
    std::ofstream{config} << c.text;
    break;
  case config_source::missing:
    config = dir_.file("absent.json");
    break;
  case config_source::folder:
    config = dir_.file("a-folder.json");
    fs::create_directory(config);
    break;
  case config_source::endless:
    config = "/dev/zero";
    break;
  }
  auto before = listing(dir_.path());

  auto args = c.command;
  bool has_db = std::find(args.begin(), args.end(), "--db") != args.end();
  if (!has_db)
    args.insert(args.end(), {"--db", db});
  // Nothing listens on port 1: a case that wrongly got past validation
  // would fail later with exit 1, not 2.
  if (std::find(args.begin(), args.end(), "--redis") == args.end())
    args.insert(args.end(), {"--redis", "127.0.0.1:1"});
  if (!config.empty())
    args.insert(args.end(), {"--config", config});

  auto r = run_outbox(args, work.string(), 30'000);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (auto mention : c.mentions) {
    if (mention == "<config>")
      mention = config;
    EXPECT_NE(r.err.find(mention), std::string::npos)
        << "stderr does not name '" << mention << "': " << r.err;
  }
  EXPECT_EQ(listing(dir_.path()), before) << "something was created";
  EXPECT_FALSE(fs::exists(db));
}

INSTANTIATE_TEST_SUITE_P(FaultCases, FaultBadConfig,
                         ::testing::ValuesIn(bad_inputs),
                         [](const ::testing::TestParamInfo<bad_input>& info) {
                           return std::string{info.param.name};
                         });

TEST(FaultBadConfigTable, HasAtLeastTwentyCases) {
  EXPECT_GE(bad_inputs.size(), 20u);
}

} // namespace
} // namespace outbox::test
