#include "startup/sink_preflight.hpp"

#include <algorithm>

namespace outbox::startup {

namespace {

std::string sink_type_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// A type with effects in Lua and in SQL would be applied in two places,
/// twice. (An OrderPlaced in the sink replaces the demo's reservation.)
std::vector<std::string> types_in_lua_too(const std::vector<std::string>& types,
                                          const broker::inbox_options& inbox) {
  auto demo = broker::inbox_options::demo_event_types();
  std::vector<std::string> both;
  for (const auto& type : types)
    if (std::count(inbox.known_types.begin(), inbox.known_types.end(), type) >
        std::count(demo.begin(), demo.end(), type))
      both.push_back(type);
  return both;
}

} // namespace

verdict consumer_sink_settings(const config::settings& s,
                               broker::inbox_options& inbox,
                               std::optional<sink::consumer_sink>& out) {
  verdict judged;
  out.reset();
  const auto& c = s.consumer;
  if (c.sink.empty() && c.effects_sql.empty())
    return judged;
  if (c.sink.empty() || c.effects_sql.empty()) {
    judged.refuse(outcome::refused_usage,
                  c.sink.empty()
                      ? "consumer.effects_sql needs consumer.sink, the "
                        "database its statements run in"
                      : "consumer.sink needs consumer.effects_sql, the "
                        "statements to run there");
    return judged;
  }
  if (s.run.consumers == 0)
    return judged;
  sink::consumer_sink chosen;
  chosen.target.location = c.sink;
  chosen.target.busy_timeout_ms = s.db.busy_timeout_ms;
  chosen.consumer = s.key_prefix;
  try {
    chosen.effects = sink::read_sql_effects(c.effects_sql);
  } catch (const sink::sql_effects_error& e) {
    judged.refuse(outcome::refused_usage,
                  std::string{"consumer.effects_sql: "} + e.what());
    return judged;
  }
  auto types = chosen.effects.types();
  auto both = types_in_lua_too(types, inbox);
  if (!both.empty()) {
    judged.refuse(outcome::refused_usage,
                  "consumer.effects_sql: " + sink_type_list(both) + " also " +
                      (both.size() == 1 ? "has an effect" : "have effects") +
                      " in consumer.effects_lua: give each type one");
    return judged;
  }
  try {
    // Opened once now: no inbox table or a statement the sink refuses
    // stops the start here, named.
    (void)sink::open_sink(chosen.target, chosen.consumer, chosen.effects);
  } catch (const sink::sink_error& e) {
    judged.refuse(outcome::refused_usage,
                  std::string{"consumer.sink: "} + e.what());
    return judged;
  } catch (const sink::sink_unavailable& e) {
    judged.refuse(outcome::refused_failure,
                  std::string{"consumer.sink: "} + e.what());
    return judged;
  }
  judged.inform("effects of " + sink_type_list(types) + " from " +
                c.effects_sql + " run in " + chosen.target.display_name());
  inbox.sink_types = types;
  out = std::move(chosen);
  return judged;
}

} // namespace outbox::startup
