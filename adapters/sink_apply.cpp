#include "adapters/sink_apply.hpp"

#include "actors/ports.hpp"
#include "broker/entry.hpp"

#include <chrono>
#include <map>
#include <variant>

namespace outbox::adapters {

namespace {

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

/// The entry as an effect reads it; nothing for a malformed entry (the
/// inbox dead-letters it) or one of a type the sink has no effect for.
std::optional<sink::sink_event>
sink_event_of(const std::string& text, const sink::sql_effects& effects) {
  auto decoded = broker::decode(text);
  const auto* entry = std::get_if<broker::event_entry>(&decoded);
  if (entry == nullptr || effects.find(entry->event_type) == nullptr)
    return std::nullopt;
  sink::sink_event event;
  event.event_id = entry->event_id;
  event.aggregate_id = entry->aggregate_id;
  event.seq = entry->seq;
  event.event_type = entry->event_type;
  event.payload = nlohmann::json::parse(entry->payload);
  if (!entry->headers.empty())
    event.headers = nlohmann::json::parse(entry->headers);
  return event;
}

} // namespace

sink_applier::sink_applier(consumer_sink settings)
    : settings_(std::move(settings)) {}

sink::sink& sink_applier::opened() {
  if (!sink_) {
    try {
      sink_ = sink::open_sink(settings_.target, settings_.consumer,
                              settings_.effects);
    } catch (const sink::sink_unavailable& e) {
      throw actors::effects_unavailable(e.what());
    } catch (const sink::sink_error& e) {
      // The start checked it: the table or a statement's table went since.
      // Retried, loudly, until the operator puts it back.
      throw actors::effects_unavailable(e.what());
    }
  }
  return *sink_;
}

std::vector<broker::applied_entry>
sink_applier::apply_batch(broker::inbox& inbox,
                          const std::vector<std::string>& entries) {
  auto fresh = inbox.classify(entries);
  std::vector<sink::sink_event> events;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (fresh[i])
      if (auto event = sink_event_of(entries[i], settings_.effects))
        events.push_back(std::move(*event));
  std::map<std::string, std::string> refused;
  if (!events.empty()) {
    std::vector<sink::sink_verdict> verdicts;
    try {
      verdicts = opened().apply(events, now_ms());
    } catch (const sink::sink_unavailable& e) {
      throw actors::effects_unavailable(e.what());
    } catch (const sink::sink_error& e) {
      sink_.reset();
      throw actors::effects_unavailable(e.what());
    }
    if (on_commit_)
      on_commit_();
    for (std::size_t i = 0; i < events.size(); ++i)
      if (verdicts[i].result == sink::sink_verdict::outcome::refused)
        refused.emplace(events[i].event_id, verdicts[i].reason);
  }
  return inbox.apply_batch(entries, refused);
}

} // namespace outbox::adapters
