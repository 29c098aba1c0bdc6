#include "cli/sink_preflight.hpp"

#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace outbox::cli {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

} // namespace

std::optional<int>
consumer_sink_settings(const config::settings& s, const std::string& who,
                       broker::inbox_options& inbox,
                       std::optional<adapters::consumer_sink>& out) {
  out.reset();
  const auto& c = s.consumer;
  if (c.sink.empty() && c.effects_sql.empty())
    return std::nullopt;
  if (c.sink.empty() || c.effects_sql.empty()) {
    notice(who,
           c.sink.empty() ? "consumer.effects_sql needs consumer.sink, the "
                            "database its statements run in"
                          : "consumer.sink needs consumer.effects_sql, the "
                            "statements to run there",
           "error");
    return exit_usage;
  }
  if (s.run.consumers == 0)
    return std::nullopt;
  adapters::consumer_sink sink;
  sink.target.location = c.sink;
  sink.target.busy_timeout_ms = s.db.busy_timeout_ms;
  sink.consumer = s.key_prefix;
  try {
    sink.effects = sink::read_sql_effects(c.effects_sql);
  } catch (const sink::sql_effects_error& e) {
    notice(who, std::string{"consumer.effects_sql: "} + e.what(), "error");
    return exit_usage;
  }
  auto types = sink.effects.types();
  // A type with effects in Lua and in SQL would be applied in two places,
  // twice. (An OrderPlaced in the sink replaces the demo's reservation.)
  auto demo = broker::inbox_options::demo_event_types();
  std::vector<std::string> both;
  for (const auto& type : types)
    if (std::count(inbox.known_types.begin(), inbox.known_types.end(), type) >
        std::count(demo.begin(), demo.end(), type))
      both.push_back(type);
  if (!both.empty()) {
    notice(who,
           "consumer.effects_sql: " + joined(both) + " also " +
               (both.size() == 1 ? "has an effect" : "have effects") +
               " in consumer.effects_lua: give each type one",
           "error");
    return exit_usage;
  }
  try {
    // Opened once now: no inbox table or a statement the sink refuses
    // stops the start here, named.
    (void)sink::open_sink(sink.target, sink.consumer, sink.effects);
  } catch (const sink::sink_error& e) {
    notice(who, std::string{"consumer.sink: "} + e.what(), "error");
    return exit_usage;
  } catch (const sink::sink_unavailable& e) {
    notice(who, std::string{"consumer.sink: "} + e.what(), "error");
    return exit_failure;
  }
  spdlog::info("{}: effects of {} from {} run in {}", who, joined(types),
               c.effects_sql, sink.target.display_name());
  inbox.sink_types = types;
  out = std::move(sink);
  return std::nullopt;
}

} // namespace outbox::cli
