#include "adapters/sink_apply.hpp"

#include "actors/ports.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry.hpp"

#include <chrono>
#include <map>
#include <set>
#include <variant>

namespace outbox::adapters {

namespace {

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

/// What the sink makes of one new entry of its types (as the inbox script
/// read it, `seen`).
struct sink_part {
  /// The event to apply, when it decodes as the inbox script reads it.
  std::optional<sink::sink_event> event;
  /// Why it cannot be applied although the inbox script reads it (decode()
  /// is stricter: committed_at, UTF-8 inside the payload): set aside
  /// rather than recorded without its effect.
  std::string refusal;
};

sink_part part_of(const std::string& text,
                  const broker::classified_entry& seen) {
  auto decoded = broker::decode(text);
  if (const auto* bad = std::get_if<broker::malformed_entry>(&decoded))
    return {std::nullopt, "entry refused by the consumer: " + bad->reason};
  const auto& entry = std::get<broker::event_entry>(decoded);
  // Read otherwise than the script read it (a key given twice): set aside.
  if (entry.event_id != seen.event_id || entry.event_type != seen.event_type)
    return {std::nullopt, "entry read otherwise by the consumer than by its "
                          "inbox (a key given twice?)"};
  sink::sink_event event;
  event.event_id = entry.event_id;
  event.aggregate_id = entry.aggregate_id;
  event.seq = entry.seq;
  event.event_type = entry.event_type;
  event.payload = nlohmann::json::parse(entry.payload);
  if (!entry.headers.empty())
    event.headers = nlohmann::json::parse(entry.headers);
  return {std::move(event), {}};
}

/// The inbox script's answer when an entry of a sink type reaches it that
/// the sink did not handle (docs/inbox-script.md).
constexpr const char* sink_again = "OUTBOX_SINK_AGAIN";

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
  auto seen = inbox.classify(entries);
  std::vector<sink::sink_event> events;
  broker::sink_outcomes outcomes;
  std::set<std::string> taken;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // Only the sink's types, as the inbox script reads them; a malformed
    // entry (no id) is the script's to dead-letter.
    if (seen[i].event_id.empty() ||
        settings_.effects.find(seen[i].event_type) == nullptr)
      continue;
    if (!seen[i].fresh) {
      outcomes.skipped.push_back(seen[i].event_id);
      continue;
    }
    auto part = part_of(entries[i], seen[i]);
    if (!part.refusal.empty())
      outcomes.refused.emplace(seen[i].event_id, part.refusal);
    // A repeat within the batch goes to the sink once: its copies share
    // the first one's fate.
    if (part.event && taken.insert(part.event->event_id).second)
      events.push_back(std::move(*part.event));
  }
  if (!events.empty()) {
    std::vector<sink::sink_verdict> verdicts;
    try {
      verdicts = opened().apply(events, now_ms());
    } catch (const sink::sink_unavailable& e) {
      // A fresh connection next time: a SQLite handle whose transaction
      // could not be ended, a file moved away, is not used again.
      sink_.reset();
      throw actors::effects_unavailable(e.what());
    } catch (const sink::sink_error& e) {
      sink_.reset();
      throw actors::effects_unavailable(e.what());
    }
    if (on_commit_)
      on_commit_();
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (verdicts[i].result == sink::sink_verdict::outcome::refused)
        outcomes.refused.emplace(events[i].event_id, verdicts[i].reason);
      else
        outcomes.done.push_back(events[i].event_id);
    }
  }
  try {
    return inbox.apply_batch(entries, outcomes);
  } catch (const broker::broker_error& e) {
    // Classified new, then changed under the sink's transaction (a dead
    // letter replayed meanwhile): the batch is taken again from the top.
    if (std::string{e.what()}.find(sink_again) != std::string::npos)
      throw actors::effects_unavailable(
          std::string{"the inbox changed under the batch, applying it "
                      "again: "} +
          e.what());
    throw;
  }
}

} // namespace outbox::adapters
