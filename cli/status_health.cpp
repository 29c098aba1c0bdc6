// `outbox status --check`: the verdict a probe or a script acts on.

#include "cli/status_snapshot.hpp"
#include "text/plural.hpp"

#include <optional>

namespace outbox::cli {

namespace {

/// How long ago a relay was last seen running, from the heartbeats: a
/// running or silent process's last note while it ran relays, a stopped
/// one's stop. Nothing when no process ever noted.
std::optional<storage::millis> relay_silence(const status_snapshot& s) {
  std::optional<storage::millis> least;
  for (const auto& p : s.relays) {
    if (p.state != "stopped" && p.relays == 0)
      continue; // every relay of it was down
    if (!least || p.seen_ago_ms < *least)
      least = p.seen_ago_ms;
  }
  return least;
}

/// Entries wait and nobody consumes them, or the consuming process stopped
/// renewing its lock (killed, frozen, cut off) though the lock still holds.
void consumer_problems(const status_snapshot& s, health& verdict) {
  const auto& redis = *s.redis;
  std::int64_t waiting = 0;
  for (const auto& [queue, length] : redis.queues)
    waiting += length;
  for (const auto& [list, length] : redis.processing)
    waiting += length;
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
  if (waiting > 0 && !consuming)
    verdict.problems.push_back(
        text::plural(waiting, "entry waits", "entries wait") +
        " in the queues and no consuming process is alive: start `outbox "
        "consume` (or `outbox run`) somewhere");
}

} // namespace

health judge(const status_snapshot& snapshot,
             storage::millis max_unpublished_age,
             storage::millis max_relay_silence) {
  health verdict;
  verdict.max_unpublished_age = max_unpublished_age;
  verdict.max_relay_silence = max_relay_silence;
  const auto& db = snapshot.outbox;
  if (auto failed = db.count("FAILED"); failed > 0)
    verdict.problems.push_back(text::plural(failed, "FAILED row") +
                               " (outbox failed lists them)");
  auto unpublished = db.count("PENDING") + db.count("SENDING");
  if (unpublished > 0 && db.oldest_unpublished_age > max_unpublished_age)
    verdict.problems.push_back("the oldest unpublished row is " +
                               rounded_duration(db.oldest_unpublished_age) +
                               " old (over " +
                               rounded_duration(max_unpublished_age) + ")");
  if (unpublished > 0 && snapshot.redis)
    if (auto silence = relay_silence(snapshot);
        !silence || *silence > max_relay_silence)
      verdict.problems.push_back(
          text::plural(unpublished, "row waits", "rows wait") +
          " to be published and " +
          (silence
               ? "no relay was seen running for " + rounded_duration(*silence) +
                     " (over " + rounded_duration(max_relay_silence) + ")"
               : std::string{"no relay process has been seen"}) +
          ": start `outbox relay` (or `outbox run`) somewhere");
  if (snapshot.redis)
    consumer_problems(snapshot, verdict);
  if (!snapshot.redis)
    verdict.problems.push_back("Redis unavailable: " + snapshot.redis_error);
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
