// `outbox status --check`: the verdict a probe or a script acts on.

#include "cli/status_snapshot.hpp"
#include "text/plural.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace outbox::cli {

namespace {

/// How long ago a relay was last seen at work: a running process's note
/// while it runs relays (0: it runs now), a silent one's last note, a
/// stopped one's stop, or a lease claimed (a relay of a version without
/// heartbeats claims them too). Nothing when none was ever seen.
std::optional<storage::millis> relay_silence(const status_snapshot& s) {
  std::optional<storage::millis> least;
  auto seen = [&](storage::millis ago) {
    if (!least || ago < *least)
      least = std::max<storage::millis>(ago, 0);
  };
  for (const auto& p : s.relays) {
    if (p.state != "stopped" && p.relays == 0)
      continue; // every relay of it was down
    seen(p.state == "running" ? 0 : p.seen_ago_ms);
  }
  for (const auto& l : s.outbox.leases) {
    if (auto age = last_claim_age(l, s.now))
      seen(*age);
    else
      // Leases of a relay that stores no claim time (a version older than
      // schema 10, still running through a rolling deploy): it held them
      // until they expire, so the silence counts from there at the most.
      // Lenient on purpose: a probe acting on this restarts relays.
      seen(s.now - l.latest_expiry);
  }
  return least;
}

void relay_problems(const status_snapshot& s, const health_limits& limits,
                    health& verdict) {
  const auto& db = s.outbox;
  auto unpublished = db.count(storage::row_status::pending) +
                     db.count(storage::row_status::sending);
  if (unpublished == 0)
    return;
  auto silence = relay_silence(s);
  if (silence && *silence <= limits.max_relay_silence)
    return;
  verdict.problems.push_back(
      text::plural(unpublished, "row waits", "rows wait") +
      " to be published and " +
      (silence
           ? "no relay was seen running for " + rounded_duration(*silence) +
                 " (over " + rounded_duration(limits.max_relay_silence) + ")"
           : std::string{"no relay process has been seen"}) +
      ": start `outbox relay` (or `outbox run`) somewhere");
}

/// Entries wait and nobody has consumed them for a while, or the consuming
/// process stopped renewing its lock (killed, frozen, cut off) though the
/// lock still holds, or the lock can never run out.
void consumer_problems(const status_snapshot& s, const health_limits& limits,
                       health& verdict) {
  const auto& redis = *s.redis;
  bool consuming = !redis.consumers_holder.empty();
  for (const auto& p : s.consumers) {
    if (p.role != "consuming")
      continue;
    consuming = true;
    if (p.stale())
      verdict.problems.push_back(
          "the consuming process " + p.process + " was last seen " +
          rounded_duration(*p.seen_ago_ms) +
          " ago (killed, frozen or cut off from Redis?); its lock runs out "
          "in " +
          rounded_duration(p.expires_in_ms) +
          ", then a standby, if any, takes over");
  }
  if (!redis.consumers_holder.empty() && redis.consumers_ttl_ms == -1)
    verdict.problems.push_back(
        "the consumers' lock (held by " + redis.consumers_holder +
        ") has no expiry: set by hand? no process can take over until it is "
        "deleted");
  // A consumer restarting leaves the queues alone for a moment: what waits
  // counts once it has waited longer than that.
  if (!consuming && s.oldest_waiting &&
      *s.oldest_waiting > limits.max_consumer_silence)
    verdict.problems.push_back(
        text::plural(redis.queued_total(), "entry waits", "entries wait") +
        " in the queues, the oldest for " +
        (*s.oldest_waiting == std::numeric_limits<storage::millis>::max()
             ? std::string{"an unknown time"}
             : rounded_duration(*s.oldest_waiting)) +
        " (over " + rounded_duration(limits.max_consumer_silence) +
        "), and no consuming process is alive: start `outbox consume` (or "
        "`outbox run`) somewhere");
}

} // namespace

health judge(const status_snapshot& snapshot, const health_limits& limits) {
  health verdict;
  verdict.limits = limits;
  const auto& db = snapshot.outbox;
  if (auto failed = db.count(storage::row_status::failed); failed > 0)
    verdict.problems.push_back(text::plural(failed, "FAILED row") +
                               " (outbox failed lists them)");
  auto unpublished = db.count(storage::row_status::pending) +
                     db.count(storage::row_status::sending);
  if (unpublished > 0 && db.oldest_unpublished_age > limits.max_unpublished_age)
    verdict.problems.push_back(
        "the oldest unpublished row is " +
        rounded_duration(db.oldest_unpublished_age) + " old (over " +
        rounded_duration(limits.max_unpublished_age) + ")");
  if (snapshot.redis) {
    relay_problems(snapshot, limits, verdict);
    consumer_problems(snapshot, limits, verdict);
  } else {
    verdict.problems.push_back("Redis unavailable: " + snapshot.redis_error);
  }
  // The pipeline cannot write (or consume) through this user: not an
  // outage, it lasts until someone changes the ACL or the proxy.
  if (!snapshot.refused.empty())
    verdict.problems.push_back(
        "Redis refuses the pipeline's commands (not an outage: fix the ACL or "
        "the proxy): " +
        broker::describe(snapshot.refused));
  // A dead-lettered entry is an event neither applied nor given up on: its
  // aggregate moved on without it, and only an operator (replay or drop)
  // settles it.
  if (snapshot.redis && snapshot.redis->dead_letter > 0)
    verdict.problems.push_back(
        text::plural(snapshot.redis->dead_letter, "dead-lettered entry waits",
                     "dead-lettered entries wait") +
        " in the dead-letter list (outbox dead-letters lists them: fix the "
        "cause and replay them, or drop them with a reason)");
  return verdict;
}

} // namespace outbox::cli
