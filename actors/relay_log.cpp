#include "actors/relay_log.hpp"

#include "actors/log_lines.hpp"
#include "text/event_headers.hpp"

#include <spdlog/spdlog.h>

#include <set>

namespace outbox::actors {

std::string describe_rows(const std::vector<storage::claimed_event>& events) {
  return bounded_list(events, [](const storage::claimed_event& e) {
    return e.event_id + " (" + e.aggregate_id + " #" + std::to_string(e.seq) +
           text::trace_suffix(e.headers) + ")";
  });
}

std::vector<storage::claimed_event>
rows_named(const storage::claim& c, const std::vector<std::string>& ids) {
  std::set<std::string> wanted(ids.begin(), ids.end());
  std::vector<storage::claimed_event> rows;
  for (const auto& e : c.events)
    if (wanted.count(e.event_id) > 0)
      rows.push_back(e);
  return rows;
}

void log_failed(const std::string& relay, const storage::failed_row& row) {
  spdlog::warn(
      "relay {}: row FAILED, later events of its aggregate wait for "
      "`outbox retry` (event {}, aggregate {}, seq {}, attempts {}{}): "
      "{}",
      relay, row.event_id, row.aggregate_id, row.seq, row.attempts,
      text::trace_suffix(row.headers), row.last_error);
}

void redis_answered(relay_context& relay) {
  relay.redis.log_end(relay.setup.clock, "relay", relay.setup.name,
                      "Redis reachable", "failed publishes");
}

void database_answered(relay_context& relay) {
  relay.database.log_end(relay.setup.clock, "relay", relay.setup.name,
                         "database usable", "failed cycles");
}

void database_failed(relay_context& relay, const char* when, const char* what) {
  auto level = relay.database.failure_level(relay.setup.clock());
  spdlog::log(level, "relay {}: database trouble{}, backing off: {}",
              relay.setup.name, when, what);
}

} // namespace outbox::actors
