#include "broker/dropped_dead_letters.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/hash_scan.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <utility>

namespace outbox::broker {

namespace {

/// Fields per HSCAN page: decisions are few, but a page stays small however
/// many there are.
constexpr std::size_t dropped_page_hint = 500;

/// A value as `drop` writes it, or what is wrong with it; nothing for a
/// decision about a record without an event_id (its value says so with
/// "event_id": null, whatever its field looks like). Defensive: the hash
/// is open to anyone with redis-cli.
std::optional<dropped_dead_letter> parse_decision(const std::string& value) {
  dropped_dead_letter d;
  auto parsed = nlohmann::json::parse(value, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    d.problem = "not a JSON object";
    return d;
  }
  if (auto id = parsed.find("event_id"); id != parsed.end() && id->is_null())
    return std::nullopt;
  auto at = parsed.find("dropped_at");
  if (at == parsed.end() || !at->is_number_integer())
    d.problem = "dropped_at is not an integer";
  else
    d.dropped_at = at->get<std::int64_t>();
  if (auto reason = parsed.find("reason");
      reason != parsed.end() && reason->is_string())
    d.reason = reason->get<std::string>();
  return d;
}

} // namespace

std::map<std::string, dropped_dead_letter>
read_dropped_dead_letters(connection& conn, const keys& names) {
  std::map<std::string, dropped_dead_letter> decisions;
  const auto key = names.dead_letter_dropped();
  // HSCAN of a key of another type answers an error, which command() throws.
  conn.command({"HLEN", key});
  scan_hash(conn, key, dropped_page_hint, [&](const hash_page& page) {
    for (const auto& [field, value] : page)
      if (auto decision = parse_decision(value))
        decisions[field] = std::move(*decision);
  });
  return decisions;
}

std::int64_t count_dropped_dead_letters(connection& conn, const keys& names) {
  auto r = conn.command({"HLEN", names.dead_letter_dropped()});
  if (r->type != REDIS_REPLY_INTEGER)
    throw broker_error(broker_errc::rejected, "unexpected reply to HLEN");
  return r->integer;
}

} // namespace outbox::broker
