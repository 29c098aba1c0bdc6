#include "startup/effects_preflight.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/effects_check.hpp"
#include "broker/key_scan.hpp"
#include "broker/lua_effects.hpp"
#include "broker/older_reservation.hpp"

namespace outbox::startup {

namespace {

/// A keyspace an older version filled keeps its reservation outside the
/// effects' prefix: merged as this consumer starts. A merge Redis refuses
/// is said and left to `outbox verify` to name.
void merge_older_reservation(broker::connection& conn,
                             const config::settings& s, verdict& judged) {
  // Adding is all a merge does: one that cannot be made now (Redis is a
  // replica for the moment, or refuses) is as good made by a later start.
  try {
    if (!broker::key_exists(conn, broker::older_reservation(s.broker)))
      return;
    auto merged = broker::merge_older_reservation(conn, s.broker);
    if (merged > 0)
      judged.inform("merged " + std::to_string(merged) + " skus of " +
                    broker::older_reservation(s.broker) +
                    " (an older outbox's reservation) into " +
                    s.broker.reserved);
  } catch (const broker::broker_error& e) {
    // Redis unavailable is said by whatever waits for it next.
    if (e.code() == broker::broker_errc::unavailable)
      judged.debug(std::string{"older reservation not merged now: "} +
                   e.what());
    else
      judged.warn(std::string{"cannot merge an older outbox's reservation "
                              "now (a later start will): "} +
                  e.what());
  }
}

/// Effects of the user's (a file, or "" for none) replace the built-in
/// reservation: on a keyspace that reserved stock, effects without
/// OrderPlaced (as every file, and "", of the versions that kept the
/// reservation apart) are said, not found later.
void warn_if_reservation_ends(broker::connection& conn,
                              const config::settings& s,
                              const std::vector<std::string>& types,
                              verdict& judged) {
  for (const auto& type : types)
    if (type == "OrderPlaced")
      return;
  if (!s.consumer.sink.empty() ||
      (!broker::key_exists(conn, s.broker.reserved) &&
       !broker::key_exists(conn, broker::older_reservation(s.broker))))
    return;
  const auto& path = s.consumer.effects_lua;
  auto named = path.empty() ? std::string{"\"\" (no effects)"} : path;
  auto keep = path.empty() ? std::string{"builtin:orders keeps it"}
                           : "copy effects/orders.lua's function into " + path +
                                 " to keep it";
  judged.warn("consumer.effects_lua " + named +
              " gives OrderPlaced no effect, so the reservation in " +
              s.broker.reserved + " stops growing; " + keep);
}

/// consumer_inbox_options' judgement, said into `judged`.
void judge_inbox_options(broker::connection& conn, const config::settings& s,
                         broker::inbox_options& out, verdict& judged) {
  out = broker::inbox_options{};
  out.unknown = broker::parse_unknown_types(s.consumer.unknown_types);
  const auto& path = s.consumer.effects_lua;
  if (s.run.consumers == 0)
    return;
  merge_older_reservation(conn, s, judged);
  if (path == broker::builtin_effects_name) {
    judged.inform("effects of OrderPlaced from " + path +
                  " (effects/orders.lua), keys under " + s.key_prefix +
                  "effects:");
    return;
  }
  if (path.empty()) {
    out.effects = "";
    warn_if_reservation_ends(conn, s, {}, judged);
    return;
  }
  try {
    out.effects = broker::read_effects_file(path);
    out.effects_name = path;
    out.effects_prefix = s.key_prefix + "effects:";
    auto types = broker::check_effects(conn, *out.effects, path);
    out.known_types.insert(out.known_types.end(), types.begin(), types.end());
    warn_if_reservation_ends(conn, s, types, judged);
    std::string named;
    for (const auto& type : types)
      named += (named.empty() ? "" : ", ") + type;
    judged.inform("effects of " +
                  (named.empty() ? std::string{"no event type"} : named) +
                  " from " + path + ", keys under " + out.effects_prefix);
  } catch (const broker::effects_error& e) {
    judged.refuse(outcome::refused_usage,
                  std::string{"consumer.effects_lua: "} + e.what());
  }
}

} // namespace

verdict consumer_inbox_options(broker::connection& conn,
                               const config::settings& s,
                               broker::inbox_options& out) {
  // A merge said, then Redis lost: the merge is told all the same.
  return keeping_remarks<broker::broker_error>(
      [&](verdict& judged) { judge_inbox_options(conn, s, out, judged); });
}

} // namespace outbox::startup
