// `outbox status --json`: one object per snapshot.

#include "actors/relay_process.hpp"
#include "cli/duration.hpp"
#include "cli/failed_row_json.hpp"
#include "cli/status_snapshot.hpp"

namespace outbox::cli {

namespace {

nlohmann::json outbox_json(const status_snapshot& s) {
  const auto& db = s.outbox;
  // Null when no row is PENDING or SENDING: an age of 0 would read as a
  // row written just now.
  bool unpublished = db.count(storage::row_status::pending) +
                         db.count(storage::row_status::sending) >
                     0;
  nlohmann::json out{{"orders", db.orders},
                     {"by_status", db.by_status},
                     {"oldest_unpublished_age_ms",
                      unpublished ? nlohmann::json(db.oldest_unpublished_age)
                                  : nlohmann::json(nullptr)},
                     {"expired_leases", db.expired_leases},
                     {"leases", nlohmann::json::array()},
                     {"failed", nlohmann::json::array()}};
  for (const auto& l : db.leases) {
    auto state = actors::relay_process_state(l.owner);
    auto claimed = last_claim_age(l, s.now);
    out["leases"].push_back(
        {{"owner", l.owner},
         {"rows", l.rows},
         {"earliest_expiry_ms", l.earliest_expiry},
         {"latest_expiry_ms", l.latest_expiry},
         {"expires_in_ms", l.earliest_expiry - s.now},
         {"all_expire_in_ms", l.latest_expiry - s.now},
         {"last_claim_age_ms",
          claimed ? nlohmann::json(*claimed) : nlohmann::json(nullptr)},
         {"process",
          state.empty() ? nlohmann::json(nullptr) : nlohmann::json(state)}});
  }
  for (const auto& f : db.failed)
    out["failed"].push_back(failed_row_json(f));
  return out;
}

nlohmann::json broker_json(const status_snapshot& s) {
  const auto& r = *s.redis;
  nlohmann::json out{
      {"queues", r.queues},
      {"processing", r.processing},
      {"processed", r.processed},
      {"dead_letter", r.dead_letter},
      {"dead_letter_dropped", r.dead_letter_dropped},
      {"counters", r.counters},
      {"consumers_lock", r.consumers_holder.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json{{"holder", r.consumers_holder},
                                              {"ttl_ms", r.consumers_ttl_ms}}},
      {"consumer_processes", nlohmann::json::array()}};
  for (const auto& p : s.consumers)
    out["consumer_processes"].push_back(
        {{"process", p.process},
         {"role", p.role},
         {"for_ms", p.for_ms},
         {"expires_in_ms", p.expires_in_ms},
         {"seen_ago_ms", p.seen_ago_ms ? nlohmann::json(*p.seen_ago_ms)
                                       : nlohmann::json(nullptr)},
         {"stale", p.stale()}});
  out["relay_processes"] = nlohmann::json::array();
  for (const auto& p : s.relays)
    out["relay_processes"].push_back({{"process", p.process},
                                      {"state", p.state},
                                      {"relays", p.relays},
                                      {"for_ms", p.for_ms},
                                      {"seen_ago_ms", p.seen_ago_ms}});
  if (s.setup)
    out.update(redis_setup_json(*s.setup));
  out["refused_commands"] = nlohmann::json::array();
  for (const auto& r : s.refused)
    out["refused_commands"].push_back(
        {{"command", r.command},
         {"needed_by", broker::to_string(r.needed_by)},
         {"error", r.words}});
  return out;
}

} // namespace

nlohmann::json status_json(const status_snapshot& s,
                           const std::optional<health>& verdict) {
  nlohmann::json out{
      {"ts", format_utc(s.now)}, {"ts_ms", s.now}, {"outbox", outbox_json(s)}};
  out["redis"] =
      s.redis ? broker_json(s) : nlohmann::json{{"error", s.redis_error}};
  if (verdict)
    out["health"] = {
        {"ok", verdict->ok()},
        {"problems", verdict->problems},
        {"max_unpublished_age_ms", verdict->limits.max_unpublished_age},
        {"max_relay_silence_ms", verdict->limits.max_relay_silence},
        {"max_consumer_silence_ms", verdict->limits.max_consumer_silence}};
  return out;
}

} // namespace outbox::cli
