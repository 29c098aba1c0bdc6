#include "tests/faults/bad_config_cases.hpp"

#include <utility>

namespace outbox::test {
namespace {

const std::vector<std::string> run = {"run", "--until-drained", "--relays",
                                      "1"};

/// `outbox run` with a config file holding `text`.
bad_input in_file(const char* name, std::string text,
                  std::vector<std::string> mentions) {
  return {name, run, config_source::file, std::move(text), std::move(mentions)};
}

/// `outbox run` with --config at a path that holds no readable file.
bad_input unreadable(const char* name, config_source source,
                     std::vector<std::string> mentions) {
  return {name, run, source, "", std::move(mentions)};
}

/// `outbox run` with these flags and no config file.
bad_input flags(const char* name, const std::vector<std::string>& given,
                std::vector<std::string> mentions) {
  auto command = run;
  command.insert(command.end(), given.begin(), given.end());
  return {name, std::move(command), config_source::none, "",
          std::move(mentions)};
}

} // namespace

const std::vector<bad_input> bad_inputs = {
    // Config files: wrong types.
    in_file("string_for_count", R"({"lease": {"batch": "256"}})",
            {"lease.batch", "expected an integer"}),
    in_file("bool_for_count", R"({"run": {"relays": true}})",
            {"run.relays", "expected an integer"}),
    in_file("number_for_path", R"({"db": {"path": 5}})",
            {"db.path", "expected a string"}),
    in_file("null_port", R"({"redis": {"port": null}})",
            {"redis.port", "null"}),
    in_file("text_for_entry_limit", R"({"broker": {"max_entry_bytes": "1MB"}})",
            {"broker.max_entry_bytes"}),
    // Negative and out-of-range counts.
    in_file("negative_relays", R"({"run": {"relays": -1}})",
            {"run.relays", "between 0 and 64"}),
    in_file("negative_consumers", R"({"run": {"consumers": -2}})",
            {"run.consumers"}),
    in_file("negative_orders", R"({"run": {"orders": -5}})", {"run.orders"}),
    in_file("zero_batch", R"({"lease": {"batch": 0}})", {"lease.batch"}),
    in_file("port_70000", R"({"redis": {"port": 70000}})",
            {"redis.port", "65535"}),
    in_file("tiny_entry_limit", R"({"broker": {"max_entry_bytes": 10}})",
            {"broker.max_entry_bytes", "1024"}),
    // A consumer limit below the publishing limit would dead-letter,
    // unreplayable, entries the relays of this very config publish.
    in_file(
        "consume_limit_below_entry_limit",
        R"({"broker": {"max_entry_bytes": 4194304, "max_consume_bytes": 1048576}})",
        {"broker.max_consume_bytes", "broker.max_entry_bytes (4194304)",
         "1048576"}),
    in_file("entry_limit_above_default_consume_limit",
            R"({"broker": {"max_entry_bytes": 33554432}})",
            {"broker.max_consume_bytes", "broker.max_entry_bytes (33554432)"}),
    in_file("bad_synchronous", R"({"db": {"synchronous": "fast"}})",
            {"db.synchronous", "FULL"}),
    // Unknown and duplicate keys.
    in_file("unknown_key", R"({"lease": {"ttl": 5000}})",
            {"lease.ttl", "did you mean lease.ttl_ms"}),
    in_file("unknown_section", R"({"leese": {}})",
            {"leese", "unknown section"}),
    in_file("duplicate_key", R"({"lease": {"batch": 1, "batch": 2}})",
            {"lease.batch", "duplicate"}),
    // Rules between keys.
    in_file("ttl_shorter_than_poll",
            R"({"lease": {"ttl_ms": 200}, "run": {"poll_interval_ms": 500}})",
            {"lease.ttl_ms", "run.poll_interval_ms"}),
    in_file("ttl_of_one_lock_renewal",
            R"({"lease": {"ttl_ms": 100}, "run": {"poll_interval_ms": 10}})",
            {"lease.ttl_ms", "at least 300", "got 100"}),
    in_file(
        "ttl_not_above_store_timeouts",
        R"({"db": {"busy_timeout_ms": 2000}, "redis": {"io_timeout_ms": 1000},
         "lease": {"ttl_ms": 3000}})",
        {"lease.ttl_ms", "db.busy_timeout_ms (2000)",
         "redis.io_timeout_ms (1000)", "got 3000"}),
    {"busy_timeout_raised_past_the_ttl",
     {"place-order", "--sku", "apple", "--qty", "1"},
     config_source::file,
     R"({"db": {"busy_timeout_ms": 60000}})",
     {"lease.ttl_ms", "db.busy_timeout_ms (60000)"}},
    in_file("switch_as_text", R"({"redis": {"allow_evicting": "true"}})",
            {"redis.allow_evicting", "expected true or false"}),
    in_file("backoff_base_above_max",
            R"({"lease": {"backoff_base_ms": 5000, "backoff_max_ms": 1000}})",
            {"lease.backoff_base_ms"}),
    in_file(
        "io_timeout_not_above_block",
        R"({"redis": {"io_timeout_ms": 100}, "run": {"consumer_block_ms": 200}})",
        {"redis.io_timeout_ms"}),
    in_file("shared_key_names", R"({"broker": {"processed": "outbox.events"}})",
            {"broker.processed", "broker.queue"}),
    // Probabilities outside [0, 1].
    in_file("probability_above_one", R"({"crash": {"relay_pause": 1.5}})",
            {"crash.relay_pause", "between 0 and 1"}),
    in_file("probability_negative",
            R"({"crash": {"consumer_after_pop": -0.1}})",
            {"crash.consumer_after_pop"}),
    in_file("share_above_one", R"({"run": {"followup_share": 2}})",
            {"run.followup_share"}),
    // The file itself.
    in_file("invalid_json", R"({"lease": {"ttl_ms": )",
            {"<config>", "invalid JSON"}),
    in_file("empty_file", "", {"<config>", "invalid JSON"}),
    in_file("top_level_array", "[1, 2]", {"<config>", "JSON object"}),
    unreadable("missing_file", config_source::missing,
               {"<config>", "No such file"}),
    unreadable("unreadable_file", config_source::folder,
               {"<config>", "cannot read"}),
    unreadable("endless_file", config_source::endless,
               {"<config>", "too large"}),
    // Flags.
    flags("redis_without_port", {"--redis", "localhost"},
          {"--redis", "HOST:PORT"}),
    flags("redis_port_zero", {"--redis", "127.0.0.1:0"}, {"--redis"}),
    flags("redis_port_too_big", {"--redis", "127.0.0.1:99999"}, {"--redis"}),
    flags("redis_port_not_a_number", {"--redis", "127.0.0.1:six"}, {"--redis"}),
    flags("bad_log_level", {"--log-level", "loud"}, {"--log-level", "loud"}),
    flags("partitions_zero", {"--partitions", "0"}, {"partitions"}),
    // Negative values for unsigned flags come back as the key's range error.
    flags("partitions_negative", {"--partitions", "-1"},
          {"broker.partitions", "got -1"}),
    flags("partitions_too_many", {"--partitions", "5000"},
          {"partitions", "1024"}),
    flags("relays_negative", {"--consumers", "1", "--relays", "-1"},
          {"relays"}),
    flags("relays_not_a_number", {"--relays", "two"}, {"--relays"}),
    flags("consumers_negative", {"--consumers", "-3"}, {"consumers"}),
    flags("orders_negative", {"--orders", "-5"}, {"orders"}),
    flags("crash_probability_above_one", {"--crash-relay-pause", "1.5"},
          {"relay_pause"}),
    flags("crash_probability_negative",
          {"--crash-consumer-after-effect", "-0.2"}, {"consumer_after_effect"}),
    flags("followup_share_flag", {"--followup-share", "2"}, {"followup_share"}),
    flags("seed_negative", {"--seed", "-1"}, {"crash.seed", "got -1"}),
    flags("unknown_flag", {"--relay", "2"}, {"--relay"}),
    flags("empty_db_flag", {"--db", ""}, {"--db"}),
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

} // namespace outbox::test
