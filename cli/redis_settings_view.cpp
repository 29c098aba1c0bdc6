#include "cli/redis_settings_view.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/partitions_record.hpp"
#include "cli/text_table.hpp"
#include "storage/clock.hpp"
#include "text/utc_time.hpp"

namespace outbox::cli {

namespace {

nlohmann::json optional_json(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string partitions_text(const redis_setup& setup) {
  if (!setup.partitions_error.empty())
    return "unreadable: " + setup.partitions_error;
  auto configured = std::to_string(setup.configured_partitions);
  if (!setup.recorded_partitions)
    return "none recorded yet (this config: " + configured + ")";
  auto recorded = std::to_string(*setup.recorded_partitions);
  if (*setup.recorded_partitions == setup.configured_partitions)
    return recorded + " (recorded in " + setup.partitions_key + ")";
  // The mismatch `outbox run` refuses: say it here too.
  return recorded + " recorded in " + setup.partitions_key +
         "; this config says " + configured +
         ", so its relays and consumers would refuse to start";
}

/// Error replies are long ("ERR unknown command 'CONFIG', with args
/// beginning with: ..."): cut like the FAILED table's errors.
constexpr std::size_t settings_error_width = 100;

/// "<moment>, <N> s ago (failover epoch E)": when the master last
/// changed, as far as the sentinel that answered knows (--json names it).
std::string master_since_text(const redis_setup& setup) {
  if (!setup.master)
    return fit("unknown: " + setup.master_error, settings_error_width);
  const auto& m = *setup.master;
  auto text = text::utc_time(setup.now_ms - m.master_for_ms) + ", " +
              std::to_string(m.master_for_ms / 1000) + " s ago (failover " +
              "epoch " + std::to_string(m.failover_epoch) + ")";
  if (m.flags != "master")
    text += "; flags " + m.flags;
  return text;
}

} // namespace

redis_setup read_redis_setup(broker::connection& conn,
                             const broker::keys& names) {
  redis_setup setup;
  // Connected first: under Sentinel the address is the one they name.
  conn.ensure_connected();
  const auto& options = conn.options();
  setup.address = options.where.to_string();
  setup.sentinel = options.sentinel;
  if (setup.sentinel) {
    setup.now_ms = storage::wall_clock_now();
    try {
      setup.master = broker::describe_master(*setup.sentinel, options.where);
    } catch (const broker::broker_error& e) {
      // The master answered a moment ago: the sentinels' own view is
      // extra, and its absence is shown, not fatal.
      setup.master_error = e.what();
    }
  }
  if (!options.username.empty())
    setup.user = options.username;
  setup.db = options.db;
  setup.settings = broker::read_redis_settings(conn);
  setup.configured_partitions = names.partitions <= 1 ? 1 : names.partitions;
  setup.partitions_key = names.partitions_record();
  try {
    setup.recorded_partitions = broker::recorded_partitions(conn, names);
  } catch (const broker::broker_error& e) {
    if (e.code() == broker::broker_errc::unavailable)
      throw;
    setup.partitions_error = e.what();
  }
  return setup;
}

nlohmann::json redis_setup_json(const redis_setup& setup) {
  const auto& s = setup.settings;
  nlohmann::json settings{
      {"maxmemory_policy", optional_json(s.maxmemory_policy)},
      {"appendonly", optional_json(s.appendonly)},
      {"appendfsync", optional_json(s.appendfsync)},
      {"save", optional_json(s.save)},
      {"role",
       s.role.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.role)}};
  if (!s.config_error.empty())
    settings["config_error"] = s.config_error;
  nlohmann::json partitions{
      {"configured", setup.configured_partitions},
      {"recorded", setup.recorded_partitions
                       ? nlohmann::json(*setup.recorded_partitions)
                       : nlohmann::json(nullptr)},
      {"key", setup.partitions_key}};
  if (!setup.partitions_error.empty())
    partitions["error"] = setup.partitions_error;
  nlohmann::json connection{
      {"address", setup.address}, {"user", setup.user}, {"db", setup.db}};
  if (setup.sentinel) {
    nlohmann::json sentinels = nlohmann::json::array();
    for (const auto& sentinel : setup.sentinel->sentinels)
      sentinels.push_back(sentinel.to_string());
    connection["sentinel"] = {{"master_name", setup.sentinel->master_name},
                              {"sentinels", sentinels}};
    if (setup.master) {
      const auto& m = *setup.master;
      connection["sentinel"]["master_since"] =
          text::utc_time(setup.now_ms - m.master_for_ms);
      connection["sentinel"]["master_for_ms"] = m.master_for_ms;
      connection["sentinel"]["failover_epoch"] = m.failover_epoch;
      connection["sentinel"]["flags"] = m.flags;
      connection["sentinel"]["asked"] = m.asked.to_string();
    } else {
      connection["sentinel"]["master_since"] = nullptr;
      connection["sentinel"]["error"] = setup.master_error;
    }
  } else {
    connection["sentinel"] = nullptr;
  }
  return {{"connection", connection},
          {"settings", settings},
          {"partitions", partitions}};
}

std::string redis_setup_text(const redis_setup& setup) {
  const auto& s = setup.settings;
  text_table table{{"REDIS SETTING", "VALUE"}};
  table.add_row({"address", setup.address});
  if (setup.sentinel) {
    // Rows of their own, each within an 80-column terminal.
    std::string sentinels;
    for (const auto& sentinel : setup.sentinel->sentinels)
      sentinels += (sentinels.empty() ? "" : ", ") + sentinel.to_string();
    table.add_row({"sentinels", sentinels});
    table.add_row({"master name", setup.sentinel->master_name});
    table.add_row({"master since", master_since_text(setup)});
  }
  table.add_row({"user", setup.user});
  table.add_row({"database", std::to_string(setup.db)});
  if (!s.config_error.empty()) {
    table.add_row({"CONFIG", fit("unavailable: " + s.config_error,
                                 settings_error_width)});
  } else {
    auto shown = [](const std::optional<std::string>& value) {
      return value ? *value : std::string{"unknown"};
    };
    table.add_row({"maxmemory-policy", shown(s.maxmemory_policy)});
    table.add_row({"appendonly", shown(s.appendonly)});
    table.add_row({"appendfsync", shown(s.appendfsync)});
    // An empty save means no RDB snapshots: say it, a blank cell reads
    // as missing.
    table.add_row({"save", s.save && s.save->empty() ? "none" : shown(s.save)});
  }
  table.add_row({"role", s.role.empty() ? "unknown" : s.role});
  table.add_row({"partitions", partitions_text(setup)});
  return table.render();
}

} // namespace outbox::cli
