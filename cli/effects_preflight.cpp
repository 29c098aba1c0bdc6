#include "cli/effects_preflight.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/effects_check.hpp"
#include "broker/key_scan.hpp"
#include "broker/lua_effects.hpp"
#include "broker/older_reservation.hpp"
#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"

#include <spdlog/spdlog.h>

namespace outbox::cli {

namespace {

/// A keyspace an older version filled keeps its reservation outside the
/// effects' prefix: merged as this consumer starts. A merge Redis refuses
/// is said and left to `outbox verify` to name.
void merge_older_reservation(broker::connection& conn,
                             const config::settings& s,
                             const std::string& who) {
  // Adding is all a merge does: one that cannot be made now (Redis is a
  // replica for the moment, or refuses) is as good made by a later start.
  try {
    if (!broker::key_exists(conn, broker::older_reservation(s.broker)))
      return;
    auto merged = broker::merge_older_reservation(conn, s.broker);
    if (merged > 0)
      spdlog::info("{}: merged {} skus of {} (an older outbox's reservation) "
                   "into {}",
                   who, merged, broker::older_reservation(s.broker),
                   s.broker.reserved);
  } catch (const broker::broker_error& e) {
    // Redis unavailable is said by whatever waits for it next.
    if (e.code() == broker::broker_errc::unavailable)
      spdlog::debug("{}: older reservation not merged now: {}", who, e.what());
    else
      warning(who, std::string{"cannot merge an older outbox's reservation "
                               "now (a later start will): "} +
                       e.what());
  }
}

/// Effects of the user's (a file, or "" for none) replace the built-in
/// reservation: on a keyspace that reserved stock, effects without
/// OrderPlaced (as every file, and "", of the versions that kept the
/// reservation apart) are said, not found later.
void warn_if_reservation_ends(broker::connection& conn,
                              const config::settings& s, const std::string& who,
                              const std::vector<std::string>& types) {
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
  warning(who, "consumer.effects_lua " + named +
                   " gives OrderPlaced no effect, so the reservation in " +
                   s.broker.reserved + " stops growing; " + keep);
}

} // namespace

std::optional<int> consumer_inbox_options(broker::connection& conn,
                                          const config::settings& s,
                                          const std::string& who,
                                          broker::inbox_options& out) {
  out = broker::inbox_options{};
  out.unknown = broker::parse_unknown_types(s.consumer.unknown_types);
  const auto& path = s.consumer.effects_lua;
  if (s.run.consumers == 0)
    return std::nullopt;
  merge_older_reservation(conn, s, who);
  if (path == broker::builtin_effects_name) {
    spdlog::info("{}: effects of OrderPlaced from {} (effects/orders.lua), "
                 "keys under {}",
                 who, path, s.key_prefix + "effects:");
    return std::nullopt;
  }
  if (path.empty()) {
    out.effects = "";
    warn_if_reservation_ends(conn, s, who, {});
    return std::nullopt;
  }
  try {
    out.effects = broker::read_effects_file(path);
    out.effects_name = path;
    out.effects_prefix = s.key_prefix + "effects:";
    auto types = broker::check_effects(conn, *out.effects, path);
    out.known_types.insert(out.known_types.end(), types.begin(), types.end());
    warn_if_reservation_ends(conn, s, who, types);
    std::string named;
    for (const auto& type : types)
      named += (named.empty() ? "" : ", ") + type;
    spdlog::info("{}: effects of {} from {}, keys under {}", who,
                 named.empty() ? "no event type" : named, path,
                 out.effects_prefix);
    return std::nullopt;
  } catch (const broker::effects_error& e) {
    notice(who, std::string{"consumer.effects_lua: "} + e.what(), "error");
    return exit_usage;
  }
}

} // namespace outbox::cli
