#include "config/settings.hpp"

#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

// Table-driven: every malformed input must raise config_error whose key (and
// the start of the message) names the offending key, or the file for
// problems with the file itself.

using outbox::config::config_error;
using outbox::config::load_file;
using outbox::config::validate;
using outbox::test::temp_dir;

namespace {

/// Where the malformed input comes from.
enum class source { text, missing_file, directory };

struct bad_case {
  const char* name;
  std::string text;
  /// The expected key; "<file>" stands for the path of the file loaded.
  std::string key;
  /// Text the message must contain besides the key.
  std::string fragment;
  source from = source::text;
};

std::ostream& operator<<(std::ostream& out, const bad_case& c) {
  return out << c.name;
}

const std::vector<bad_case> bad_cases = {
    // Wrong types.
    {"string_for_integer", R"({"lease": {"batch": "256"}})", "lease.batch",
     "expected an integer, got string"},
    {"bool_for_integer", R"({"run": {"relays": true}})", "run.relays",
     "expected an integer, got boolean"},
    {"fraction_for_integer", R"({"lease": {"batch": 1.5}})", "lease.batch",
     "expected an integer, got 1.5"},
    {"whole_float_for_integer", R"({"run": {"orders": 1.0}})", "run.orders",
     "expected an integer, got 1.0"},
    {"exponent_for_integer", R"({"lease": {"ttl_ms": 1e4}})", "lease.ttl_ms",
     "expected an integer"},
    {"null_value", R"({"redis": {"port": null}})", "redis.port", "got null"},
    {"string_for_probability", R"({"crash": {"relay_pause": "0.5"}})",
     "crash.relay_pause", "expected a number, got string"},
    {"number_for_string", R"({"db": {"path": 5}})", "db.path",
     "expected a string, got 5"},
    {"null_section", R"({"db": null})", "db", "expected an object, got null"},
    {"array_section", R"({"run": [1, 2]})", "run", "expected an object"},
    // Unknown and duplicate keys.
    {"unknown_top_level", R"({"leese": {}})", "leese",
     "unknown section (did you mean lease?)"},
    {"unknown_nested_with_hint", R"({"lease": {"ttl": 5000}})", "lease.ttl",
     "did you mean lease.ttl_ms?"},
    {"unknown_nested_typo", R"({"redis": {"prot": 6379}})", "redis.prot",
     "did you mean redis.port?"},
    {"unknown_nested_no_hint", R"({"run": {"zzzzzzzz": 1}})", "run.zzzzzzzz",
     "unknown key"},
    {"key_in_wrong_section", R"({"lease": {"poll_interval_ms": 10}})",
     "lease.poll_interval_ms", "did you mean run.poll_interval_ms?"},
    {"duplicate_key", R"({"lease": {"batch": 1, "batch": 2}})", "lease.batch",
     "duplicate key"},
    {"replica_wait_past_the_lease",
     R"({"redis": {"min_replica_acks": 1, "replica_ack_timeout_ms": 3334}})",
     "redis.replica_ack_timeout_ms",
     "must be below a third of lease.ttl_ms (10000)"},
    {"sentinels_not_a_list", R"({"redis": {"sentinels": "h:26379"}})",
     "redis.sentinels", "expected an array of strings, got string"},
    {"sentinels_not_strings", R"({"redis": {"sentinels": ["h", 26379]}})",
     "redis.sentinels", "expected an array of strings, got 26379 in it"},
    {"sentinels_empty_string", R"({"redis": {"sentinels": [""]}})",
     "redis.sentinels", "must not hold an empty string"},
    // Ranges.
    {"negative_relays", R"({"run": {"relays": -1}})", "run.relays",
     "must be between 0 and 64, got -1"},
    {"negative_consumers", R"({"run": {"consumers": -2}})", "run.consumers",
     "must be between 0 and 64"},
    {"negative_orders", R"({"run": {"orders": -5}})", "run.orders",
     "must be >= 0"},
    {"relays_beyond_int", R"({"run": {"relays": 99999999999}})", "run.relays",
     "must be between 0 and 64"},
    {"relays_beyond_limit", R"({"run": {"relays": 65}})", "run.relays",
     "must be between 0 and 64, got 65"},
    {"consumers_beyond_limit", R"({"run": {"consumers": 100000}})",
     "run.consumers", "must be between 0 and 64, got 100000"},
    {"seed_beyond_int64", R"({"crash": {"seed": 18446744073709551615}})",
     "crash.seed", "must be between"},
    {"port_zero", R"({"redis": {"port": 0}})", "redis.port",
     "must be between 1 and 65535, got 0"},
    {"port_70000", R"({"redis": {"port": 70000}})", "redis.port",
     "must be between 1 and 65535, got 70000"},
    {"unknown_db_scheme", R"({"db": {"path": "postgress://u@h/outbox"}})",
     "db.path", "unknown scheme \"postgress://\""},
    {"bad_synchronous", R"({"db": {"synchronous": "fast"}})", "db.synchronous",
     "must be one of FULL, NORMAL, OFF"},
    {"bad_relay_synchronous", R"({"db": {"relay_synchronous": "x"}})",
     "db.relay_synchronous", "must be one of FULL, NORMAL, OFF"},
    {"bad_log_level", R"({"log": {"level": "verbose"}})", "log.level",
     "must be one of trace, debug, info, warn, error, off"},
    {"bad_log_format", R"({"log": {"format": "logfmt"}})", "log.format",
     "must be one of text, json"},
    {"bad_unknown_types", R"({"consumer": {"unknown_types": "drop"}})",
     "consumer.unknown_types", "must be one of record, dead-letter"},
    {"summary_too_often", R"({"log": {"summary_interval_ms": 10}})",
     "log.summary_interval_ms", "must be between 100 and"},
    {"empty_queue_name", R"({"broker": {"queue": ""}})", "broker.queue",
     "must not be empty"},
    {"empty_db_path", R"({"db": {"path": ""}})", "db.path",
     "must not be empty"},
    {"partitions_zero", R"({"broker": {"partitions": 0}})", "broker.partitions",
     "must be between 1 and 1024"},
    {"partitions_negative", R"({"broker": {"partitions": -3}})",
     "broker.partitions", "must be between 1 and 1024"},
    {"max_entry_bytes_too_small", R"({"broker": {"max_entry_bytes": 100}})",
     "broker.max_entry_bytes", "must be between 1024 and 536870912, got 100"},
    {"max_entry_bytes_as_text", R"({"broker": {"max_entry_bytes": "1MB"}})",
     "broker.max_entry_bytes", "expected an integer, got string"},
    {"max_consume_bytes_too_small", R"({"broker": {"max_consume_bytes": 100}})",
     "broker.max_consume_bytes", "must be between 1024 and 536870912, got 100"},
    {"max_consume_bytes_too_big",
     R"({"broker": {"max_consume_bytes": 536870913}})",
     "broker.max_consume_bytes", "must be between 1024 and 536870912"},
    {"batch_zero", R"({"lease": {"batch": 0}})", "lease.batch",
     "must be between 1 and 10000"},
    {"batch_too_big", R"({"lease": {"batch": 10001}})", "lease.batch",
     "must be between 1 and 10000"},
    {"ttl_below_floor", R"({"lease": {"ttl_ms": 99}})", "lease.ttl_ms",
     "must be between 100"},
    {"max_attempts_zero", R"({"lease": {"max_attempts": 0}})",
     "lease.max_attempts", "must be >= 1"},
    {"negative_busy_timeout", R"({"db": {"busy_timeout_ms": -1}})",
     "db.busy_timeout_ms", "must be between 0"},
    {"probability_above_one", R"({"crash": {"relay_after_claim": 1.5}})",
     "crash.relay_after_claim", "must be between 0 and 1, got 1.5"},
    {"probability_negative", R"({"crash": {"consumer_after_pop": -0.1}})",
     "crash.consumer_after_pop", "must be between 0 and 1"},
    {"followup_share_above_one", R"({"run": {"followup_share": 2}})",
     "run.followup_share", "must be between 0 and 1"},
    // Rules between keys (validate).
    {"max_consume_bytes_below_max_entry_bytes",
     R"({"broker": {"max_entry_bytes": 4194304, "max_consume_bytes": 2097152}})",
     "broker.max_consume_bytes",
     "must be at least broker.max_entry_bytes (4194304), got 2097152"},
    {"max_entry_bytes_above_the_default_consume_limit",
     R"({"broker": {"max_entry_bytes": 33554432}})", "broker.max_consume_bytes",
     "must be at least broker.max_entry_bytes (33554432), got 16777216"},
    {"ttl_shorter_than_poll",
     R"({"lease": {"ttl_ms": 200}, "run": {"poll_interval_ms": 500}})",
     "lease.ttl_ms", "must be greater than run.poll_interval_ms (500)"},
    {"ttl_equal_to_poll",
     R"({"lease": {"ttl_ms": 500}, "run": {"poll_interval_ms": 500}})",
     "lease.ttl_ms", "run.poll_interval_ms"},
    {"backoff_base_above_max",
     R"({"lease": {"backoff_base_ms": 5000, "backoff_max_ms": 1000}})",
     "lease.backoff_base_ms", "must not exceed lease.backoff_max_ms (1000)"},
    {"idle_poll_below_poll",
     R"({"run": {"poll_interval_ms": 80, "idle_poll_max_ms": 40}})",
     "run.idle_poll_max_ms", "at least run.poll_interval_ms"},
    {"io_timeout_not_above_block",
     R"({"redis": {"io_timeout_ms": 200}, "run": {"consumer_block_ms": 200}})",
     "redis.io_timeout_ms", "run.consumer_block_ms"},
    // The lease is also the consumers' lock, renewed every 100 ms.
    {"ttl_of_one_renewal",
     R"({"lease": {"ttl_ms": 100}, "run": {"poll_interval_ms": 10}})",
     "lease.ttl_ms", "must be at least 300 (three renewals"},
    {"ttl_below_three_renewals",
     R"({"db": {"busy_timeout_ms": 0}, "redis": {"io_timeout_ms": 250},
         "lease": {"ttl_ms": 299}, "run": {"poll_interval_ms": 10}})",
     "lease.ttl_ms", "got 299"},
    {"ttl_equal_to_store_timeouts", R"({"lease": {"ttl_ms": 9000}})",
     "lease.ttl_ms",
     "must be greater than db.busy_timeout_ms (5000) + redis.io_timeout_ms "
     "(4000) = 9000, got 9000"},
    {"ttl_under_raised_busy_timeout",
     R"({"db": {"busy_timeout_ms": 8000}, "lease": {"ttl_ms": 10000}})",
     "lease.ttl_ms", "db.busy_timeout_ms (8000)"},
    {"ttl_under_raised_io_timeout",
     R"({"redis": {"io_timeout_ms": 6000}, "lease": {"ttl_ms": 10000}})",
     "lease.ttl_ms", "redis.io_timeout_ms (6000)"},
    {"negative_db", R"({"redis": {"db": -1}})", "redis.db",
     "must be >= 0, got -1"},
    {"number_for_username", R"({"redis": {"username": 7}})", "redis.username",
     "expected a string, got 7"},
    {"number_for_password", R"({"redis": {"password": 271828}})",
     "redis.password", "expected a string, got number"},
    {"username_with_space", R"({"redis": {"username": "app user"}})",
     "redis.username", "must not hold spaces or control characters"},
    {"string_for_switch", R"({"redis": {"allow_evicting": "yes"}})",
     "redis.allow_evicting", "expected true or false, got string"},
    {"number_for_switch", R"({"redis": {"allow_evicting": 1}})",
     "redis.allow_evicting", "expected true or false, got 1"},
    {"shared_key_names", R"({"broker": {"processed": "outbox.events"}})",
     "broker.processed", "must differ from broker.queue"},
    {"bench_key_prefix", R"({"broker": {"key_prefix": "bench."}})",
     "broker.key_prefix", "must not start with \"bench.\""},
    {"key_prefix_number", R"({"broker": {"key_prefix": 1}})",
     "broker.key_prefix", "expected a string, got 1"},
    // The file itself.
    {"invalid_json", "{\"lease\": {\"ttl_ms\": }}", "<file>",
     "invalid JSON: parse error at line 1, column 22"},
    {"invalid_json_second_line", "{\n  \"db\": {\"path\": \"x\"\n", "<file>",
     "line 3"},
    {"number_overflow", R"({"crash": {"relay_pause": 1e400}})", "<file>",
     "invalid JSON: number overflow"},
    {"empty_file", "", "<file>", "invalid JSON"},
    {"top_level_array", "[1, 2]", "<file>",
     "expected a JSON object at the top level, got array"},
    {"top_level_string", "\"hello\"", "<file>",
     "expected a JSON object at the top level, got string"},
    {"missing_file", "", "<file>", "No such file or directory",
     source::missing_file},
    {"unreadable_file", "", "<file>", "cannot read the config file",
     source::directory},
};

class ConfigMalformed : public testing::TestWithParam<bad_case> {};

} // namespace

TEST_P(ConfigMalformed, ThrowsConfigErrorNamingTheKey) {
  const auto& c = GetParam();
  temp_dir dir{"outbox-config"};
  std::string path;
  switch (c.from) {
  case source::text:
    path = dir.write("config.json", c.text);
    break;
  case source::missing_file:
    path = (dir.path() / "absent.json").string();
    break;
  case source::directory:
    // A directory opens but cannot be read (permissions would not stop
    // a test running as root).
    path = dir.path().string();
    break;
  }
  auto key = c.key == "<file>" ? path : c.key;
  try {
    validate(load_file(path));
    FAIL() << "no config_error for " << c.name;
  } catch (const config_error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.key(), key) << message;
    EXPECT_EQ(message.rfind(key + ": ", 0), 0u) << message;
    EXPECT_THAT(message, testing::HasSubstr(c.fragment))
        << "message: " << message << "\nexpected to contain: " << c.fragment;
  }
}

INSTANTIATE_TEST_SUITE_P(ConfigCases, ConfigMalformed,
                         testing::ValuesIn(bad_cases),
                         [](const testing::TestParamInfo<bad_case>& info) {
                           return std::string{info.param.name};
                         });
