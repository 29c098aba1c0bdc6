// `outbox status` as tables on a terminal.

#include "actors/relay_process.hpp"
#include "cli/status_snapshot.hpp"
#include "cli/text_table.hpp"
#include "text/terminal_text.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace outbox::cli {

namespace {

/// The FAILED table's last error is cut to this many characters; --json has
/// it in full. Wide enough that a broker refusal, which starts with the
/// event's id, still shows its reason.
constexpr std::size_t status_error_width = 100;

/// Stopped or silent relay processes listed in the table at most.
constexpr std::size_t status_gone_relays_shown = 10;

/// When a lease runs out, from now: "in 9.8s" or "expired 1.2s ago" (an
/// expired lease waits for another relay to take its rows over).
std::string relative_expiry(storage::millis expiry, storage::millis now) {
  auto left = expiry - now;
  return left > 0 ? "in " + rounded_duration(left)
                  : "expired " + rounded_duration(-left) + " ago";
}

/// What a relay's SENDING rows wait for: its ack, or (a relay that died,
/// e.g. during a stall behind FAILED rows) their leases to expire, after
/// which a running relay claims them again.
std::string waiting_for(const storage::owner_leases& l,
                        const std::string& state, storage::millis now) {
  if (l.latest_expiry <= now)
    return "a running relay to claim them (leases expired)";
  auto all = "their leases to expire: all in " +
             rounded_duration(l.latest_expiry - now);
  return state == "gone" ? all + " (the relay is gone)"
                         : "the relay's ack, or " + all;
}

/// The relays holding leases: lease owners of SENDING rows.
std::string leases_text(const status_snapshot& s) {
  const auto& db = s.outbox;
  if (db.leases.empty())
    return "";
  text_table leases{{"LEASE OWNER (RELAY)", "ROWS", "LAST CLAIM",
                     "EARLIEST EXPIRY", "PROCESS", "ROWS WAIT FOR"}};
  for (const auto& l : db.leases) {
    auto state = actors::relay_process_state(l.owner);
    auto claimed = last_claim_age(l, s.now);
    leases.add_row(
        {l.owner, std::to_string(l.rows),
         claimed && *claimed >= 0 ? rounded_duration(*claimed) + " ago" : "-",
         relative_expiry(l.earliest_expiry, s.now), state.empty() ? "-" : state,
         waiting_for(l, state, s.now)});
  }
  return '\n' + leases.render();
}

std::string outbox_text(const status_snapshot& s) {
  const auto& db = s.outbox;
  // Statuses in the order a row goes through them, not alphabetical.
  text_table statuses{{"STATUS", "ROWS"}};
  for (auto status : storage::row_lifecycle)
    statuses.add_row(
        {storage::row_status_text(status), std::to_string(db.count(status))});
  for (const auto& [status, count] : db.by_status)
    if (!storage::row_status_of(status))
      statuses.add_row({status, std::to_string(count)});
  std::string out = statuses.render() + '\n';

  auto unpublished = db.count(storage::row_status::pending) +
                     db.count(storage::row_status::sending);
  text_table totals{{"ORDERS", "OLDEST UNPUBLISHED", "EXPIRED LEASES"}};
  totals.align_right(1).add_row(
      {std::to_string(db.orders),
       unpublished == 0 ? "-" : rounded_duration(db.oldest_unpublished_age),
       std::to_string(db.expired_leases)});
  out += totals.render();
  out += leases_text(s);

  if (!db.failed.empty()) {
    text_table failed{
        {"FAILED EVENT", "AGGREGATE", "SEQ", "TYPE", "ATTEMPTS", "LAST ERROR"}};
    for (const auto& f : db.failed)
      failed.add_row({f.event_id, f.aggregate_id, std::to_string(f.seq),
                      f.event_type, std::to_string(f.attempts),
                      fit_keeping_end(f.last_error, status_error_width)});
    out += '\n' + failed.render();
    auto total = db.count(storage::row_status::failed);
    if (total > static_cast<std::int64_t>(db.failed.size()))
      out += "(the oldest " + std::to_string(db.failed.size()) + " of " +
             std::to_string(total) + "; outbox failed lists them all)\n";
  }
  return out;
}

/// The consuming process and the standbys, from their notes; the lock's
/// holder alone when it left none (a process of an older version).
std::string consumers_text(const status_snapshot& s) {
  const auto& redis = *s.redis;
  text_table table{
      {"CONSUMER PROCESS", "ROLE", "FOR", "LAST SEEN", "LOCK EXPIRES IN"}};
  auto holder_process =
      redis.consumers_holder.substr(0, redis.consumers_holder.rfind('#'));
  // -1: the key has no ttl; no renewal will ever end it.
  auto lock_expiry = redis.consumers_ttl_ms >= 0
                         ? rounded_duration(redis.consumers_ttl_ms)
                         : std::string{"never"};
  bool holder_noted = false;
  for (const auto& p : s.consumers) {
    bool holds = p.role == "consuming" && p.process == holder_process;
    holder_noted = holder_noted || holds;
    auto seen = p.seen_ago_ms ? rounded_duration(*p.seen_ago_ms) + " ago"
                              : std::string{"?"};
    table.add_row({p.process,
                   p.role != "consuming" ? "standby"
                   : p.stale()           ? "consuming (stale)"
                                         : "consuming",
                   rounded_duration(p.for_ms), seen,
                   holds ? lock_expiry : "-"});
  }
  if (!redis.consumers_holder.empty() && !holder_noted)
    table.add_row({redis.consumers_holder, "consuming", "?", "?", lock_expiry});
  return table.empty() ? "" : '\n' + table.render();
}

/// Every relay process by its heartbeat: running (idle or busy: the leases
/// table shows the busy ones), stopped, or silent (it stopped noting).
std::string relays_text(const status_snapshot& s) {
  text_table table{{"RELAY PROCESS", "STATE", "RELAYS", "FOR", "LAST SEEN"}};
  table.align_right(2);
  std::size_t gone = 0;
  for (const auto& p : s.relays) {
    // Notes are kept a day: short runs and restarts add up. The running
    // ones are always shown, then the most recently seen of the rest.
    if (p.state != "running" && gone++ >= status_gone_relays_shown)
      continue;
    table.add_row({p.process, p.state,
                   p.state == "stopped" ? "-" : std::to_string(p.relays),
                   rounded_duration(p.for_ms),
                   rounded_duration(p.seen_ago_ms) + " ago"});
  }
  if (table.empty())
    return "";
  auto out = '\n' + table.render();
  if (gone > status_gone_relays_shown)
    out += "(and " + std::to_string(gone - status_gone_relays_shown) +
           " more stopped or silent; --json lists them all)\n";
  return out;
}

std::string redis_text(const status_snapshot& s, const broker::keys& names) {
  const auto& redis = *s.redis;
  // Each queue with the entries consumers have taken from it but not yet
  // finished; a processing list names its queue, so the two sum up per queue.
  std::map<std::string, std::int64_t> in_processing;
  for (const auto& [list, length] : redis.processing)
    in_processing[names.queue_of(list).value_or(list)] += length;
  text_table queues{{"QUEUE", "QUEUED", "PROCESSING"}};
  for (const auto& [queue, length] : redis.queues)
    queues.add_row(
        {queue, std::to_string(length), std::to_string(in_processing[queue])});
  // Lists of queues this configuration no longer has (partitions changed).
  for (const auto& [queue, length] : in_processing)
    if (redis.queues.count(queue) == 0)
      queues.add_row({queue, "", std::to_string(length)});
  std::string out = queues.render();

  if (!redis.processing.empty()) {
    text_table processing{{"PROCESSING LIST", "ENTRIES"}};
    for (const auto& [list, length] : redis.processing)
      processing.add_row({list, std::to_string(length)});
    out += '\n' + processing.render();
  }
  out += relays_text(s);
  out += consumers_text(s);

  text_table counts{{"REDIS", "COUNT"}};
  counts.add_row({"processed", std::to_string(redis.processed)});
  counts.add_row({"dead-letter list", std::to_string(redis.dead_letter)});
  counts.add_row(
      {"dead letters dropped", std::to_string(redis.dead_letter_dropped)});
  for (const auto& [name, value] : redis.counters)
    counts.add_row({name, std::to_string(value)});
  return out + '\n' + counts.render();
}

/// The pipeline's commands Redis refuses this user, and why in its words.
std::string refused_text(const status_snapshot& s) {
  text_table table{{"REDIS REFUSES", "NEEDED BY", "REDIS SAYS"}};
  for (const auto& r : s.refused)
    table.add_row({r.command, broker::to_string(r.needed_by), r.words});
  auto user = s.setup ? s.setup->user : std::string{"this user"};
  return table.render() + "not an outage: fix the ACL of user " +
         text::escaped(user) + " or the proxy\n";
}

} // namespace

std::string rounded_duration(storage::millis ms) {
  auto n = static_cast<long long>(ms);
  char text[48];
  if (n < 1000)
    std::snprintf(text, sizeof text, "%lldms", n);
  else if (n < 60'000)
    std::snprintf(text, sizeof text, "%lld.%llds", n / 1000, n % 1000 / 100);
  else if (n < 3'600'000)
    std::snprintf(text, sizeof text, "%lldm%02llds", n / 60'000, n / 1000 % 60);
  else if (n < 86'400'000)
    std::snprintf(text, sizeof text, "%lldh%02lldm", n / 3'600'000,
                  n / 60'000 % 60);
  else
    std::snprintf(text, sizeof text, "%lldd%02lldh", n / 86'400'000,
                  n / 3'600'000 % 24);
  return text;
}

std::string status_text(const status_snapshot& s, const broker::keys& names,
                        const std::optional<health>& verdict) {
  auto text = outbox_text(s) + '\n';
  text += s.redis
              ? redis_text(s, names)
              : "REDIS  unavailable: " + text::escaped(s.redis_error) + '\n';
  if (s.redis && s.setup)
    text += '\n' + redis_setup_text(*s.setup);
  if (s.redis && !s.refused.empty())
    text += '\n' + refused_text(s);
  if (verdict) {
    text += "\nHEALTH  ";
    if (verdict->ok())
      text += "ok\n";
    for (std::size_t i = 0; i < verdict->problems.size(); ++i)
      text += (i == 0 ? "" : "        ") + text::escaped(verdict->problems[i]) +
              '\n';
  }
  return text;
}

} // namespace outbox::cli
