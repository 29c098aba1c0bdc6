#include "actors/coordinator_progress.hpp"

#include "actors/log_lines.hpp"
#include "actors/refusal.hpp"
#include "text/plural.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace outbox::actors {

namespace {

using text::plural;

/// Stillness shorter than this is the gap between two batches, not news;
/// shorter with a short stall timeout, so the line says why before the
/// stall rule ends the run.
storage::millis quiet_after(const coordinator_core& st) {
  return std::min<storage::millis>(2000, stall_timeout(st) / 2);
}

/// "in 7 s", or "now" once the lease has run out (a relay takes the rows at
/// its next claim).
std::string expiry_text(storage::millis at, storage::millis now) {
  if (at <= now)
    return "now";
  return "in " + std::to_string((at - now + 999) / 1000) + " s";
}

/// The names of the relays running in this process now.
std::set<std::string> running_relays(const coordinator_core& st) {
  std::set<std::string> names;
  for (const auto& slot : st.slots)
    if (slot.kind == worker_slot::role::relay && slot.running)
      names.insert(slot.name);
  return names;
}

/// Leases held by relays that do not move: how many rows, how many relays,
/// what they are, and when the first expires.
struct held_leases {
  std::int64_t rows = 0;
  std::int64_t relays = 0;
  std::int64_t first_expiry = 0;
  std::set<std::string> kinds; // "dead", "paused", "other process"
  std::string first_owner;
};

/// With `at_end`, only the leases known to be stranded: those of this
/// process's relays (all stopped by then) and expired ones; another
/// process's relay may be alive and about to ack its rows.
held_leases leases_not_moving(const coordinator_core& st,
                              const metrics::pipeline_snapshot& s,
                              storage::millis now, bool at_end) {
  held_leases held;
  auto running = running_relays(st);
  auto ours = "relay-" + st.setup.name_prefix + "-";
  for (const auto& lease : s.leases) {
    bool here = running.count(lease.owner) > 0;
    bool mine = lease.owner.rfind(ours, 0) == 0;
    if (at_end && (here || (!mine && lease.earliest_expiry > now)))
      continue;
    held.kinds.insert(here ? "paused" : mine ? "dead" : "other process");
    if (held.relays == 0 || lease.earliest_expiry < held.first_expiry)
      held.first_expiry = lease.earliest_expiry;
    if (held.first_owner.empty())
      held.first_owner = lease.owner;
    held.rows += lease.rows;
    ++held.relays;
  }
  return held;
}

/// "of a dead relay", "of 2 paused relays", "of a relay of another
/// process", "of 3 relays".
std::string holders_text(const held_leases& held) {
  if (held.kinds.size() != 1)
    return "of " + plural(held.relays, "relay", "relays");
  const auto& kind = *held.kinds.begin();
  if (kind == "other process")
    return held.relays == 1 ? "of a relay of another process"
                            : "of " + std::to_string(held.relays) +
                                  " relays of other processes";
  return held.relays == 1
             ? "of a " + kind + " relay"
             : "of " + std::to_string(held.relays) + " " + kind + " relays";
}

std::string why_still(const coordinator_core& st,
                      const metrics::pipeline_snapshot& s,
                      storage::millis now) {
  const auto& run = st.setup.settings.run;
  if (auto refused = st.setup.metrics->refusals.latest(now))
    return refusal_text(*refused);
  if (run.consumers > 0 && !st.consuming && !st.standby_behind.empty())
    return "standby: the consumers' lock is held by " + st.standby_behind;
  auto unpublished = s.pending + s.sending;
  if (s.failed > 0 && unpublished > 0)
    return plural(s.failed, "FAILED row blocks", "FAILED rows block") + " " +
           plural(unpublished, "later row", "later rows") +
           ": fix the cause, then `outbox retry`";
  auto held = leases_not_moving(st, s, now, false);
  if (held.rows > 0)
    return "waiting for " + plural(held.rows, "lease", "leases") + " " +
           holders_text(held) + ", " +
           (held.first_expiry <= now
                ? "expired, claimable now"
                : "expire " + expiry_text(held.first_expiry, now));
  if (s.pending > 0 && run.relays == 0)
    return plural(s.pending, "PENDING row", "PENDING rows") +
           " but no relay in this process";
  auto unconsumed = s.queued + s.in_processing;
  if (unconsumed > 0 && run.consumers == 0)
    return plural(unconsumed, "entry", "entries") +
           " queued but no consumer in this process";
  if (unpublished + unconsumed == 0)
    return "idle: nothing left to publish or consume";
  return "nothing moved for " +
         std::to_string((now - st.last_movement) / 1000) + " s";
}

/// This process's last stage, and how many events it has handled.
std::pair<const char*, std::int64_t> own_events(const coordinator_core& st) {
  const auto& run = st.setup.settings.run;
  const auto& m = *st.setup.metrics;
  if (run.consumers > 0)
    return {"processed", m.applied.load()};
  if (run.relays > 0)
    return {"published", m.acked.load()};
  return {"written", m.events_appended.load()};
}

} // namespace

metrics::pipeline_snapshot
with_last_known(metrics::pipeline_snapshot now,
                const metrics::pipeline_snapshot& before) {
  if (!now.database_answered)
    metrics::copy_database_figures(before, now);
  if (!now.redis_answered)
    metrics::copy_redis_figures(before, now);
  return now;
}

metrics::pipeline_snapshot
with_light_read(metrics::pipeline_snapshot known,
                const metrics::pipeline_snapshot& light) {
  if (light.redis_answered)
    metrics::copy_redis_figures(light, known);
  if (light.database_answered)
    known.database_mark = light.database_mark;
  known.trouble = light.trouble;
  known.outage = light.outage;
  known.database_answered = light.database_answered;
  known.redis_answered = light.redis_answered;
  return known;
}

namespace {

std::int64_t rows_written(const metrics::run_metrics& m) {
  return m.orders_placed.load() + m.events_appended.load();
}

} // namespace

void remember_count(coordinator_core& st) {
  st.counted = st.last_known;
  st.written_at_count = rows_written(*st.setup.metrics);
  st.acked_at_count = st.setup.metrics->acked.load();
}

metrics::pipeline_snapshot
between_counts(const coordinator_core& st,
               const metrics::pipeline_snapshot& light) {
  auto s = with_light_read(st.counted, light);
  auto written = rows_written(*st.setup.metrics) - st.written_at_count;
  auto acked = st.setup.metrics->acked.load() - st.acked_at_count;
  // Acked rows were PENDING at the count or written since, less those
  // SENDING then: an estimate, righted by the next count.
  s.pending = std::max<std::int64_t>(s.pending + written - acked, 0);
  s.published += acked;
  s.outbox_rows += written;
  return s;
}

bool refusal_met(const coordinator_core& st, storage::millis now) {
  // The writer's refused groups move PostgreSQL's mark too (its counters
  // count rolled-back rows): the counts tell then.
  return st.setup.metrics->refusals.latest(now).has_value() ||
         st.setup.metrics->writer_refusals.latest(now).has_value();
}

void note_movement(coordinator_core& st, const metrics::pipeline_snapshot& s,
                   storage::millis now) {
  // The database's change mark, where there is one, stands for its counts:
  // it moves with every commit, and reading it costs nothing where counting
  // grows with the outbox. Never both: a light read has no counts. While
  // Redis refuses the relays' commands they claim and hand back the same
  // rows at every retry: the mark moves and PENDING and SENDING trade rows
  // with nothing done, so only their sum counts then.
  bool refused = refusal_met(st, now);
  std::optional<std::int64_t> m;
  if (!refused)
    m = s.database_mark;
  auto signature = std::make_tuple(
      m.value_or(-1), m ? 0 : s.pending + (refused ? s.sending : 0),
      m || refused ? 0 : s.sending, m ? 0 : s.published, m ? 0 : s.failed,
      s.queued, s.in_processing, s.processed,
      st.setup.metrics->outage_retries.load());
  if (signature != st.progress_signature) {
    st.progress_signature = signature;
    st.last_movement = now;
  }
}

run_progress progress_of(coordinator_core& st,
                         const metrics::pipeline_snapshot& s,
                         storage::millis now) {
  const auto& run = st.setup.settings.run;
  const auto& m = *st.setup.metrics;
  run_progress p;
  p.elapsed_ms = now - st.started_at;
  p.state = s;
  p.relay_restarts = m.relay_restarts.load();
  p.consumer_restarts = m.consumer_restarts.load();
  // Done/target of this process's share: the orders it places, else the
  // rows its consumers or relays work through (of every row stored).
  if (run.orders > 0) {
    p.done_label = "orders";
    p.done = m.orders_placed.load();
    p.target = run.orders;
  } else if (run.consumers > 0) {
    p.done_label = "processed";
    p.done = s.processed;
    p.target = s.outbox_rows;
  } else {
    p.done_label = "published";
    p.done = s.published;
    p.target = s.outbox_rows;
  }
  // Rows counted by an estimate between two counts (rows other processes
  // wrote are not in it yet), or records of events whose rows were purged:
  // the line never says more than all of it.
  if (p.done_label != "orders")
    p.done = std::min(p.done, p.target);
  auto events = own_events(st).second;
  if (now > st.rate_at && st.rate_at > 0)
    p.events_per_s = static_cast<double>(events - st.rate_count) * 1000.0 /
                     static_cast<double>(now - st.rate_at);
  st.rate_at = now;
  st.rate_count = events;
  p.waiting = waiting_reason(st, s, now);
  return p;
}

std::string waiting_reason(const coordinator_core& st,
                           const metrics::pipeline_snapshot& s,
                           storage::millis now) {
  auto still_for = now - st.last_movement;
  if (!s.trouble.empty() || still_for < quiet_after(st) || !st.load_done)
    return {};
  auto why = why_still(st, s, now);
  if (st.setup.until_drained && !drained(st, s)) {
    auto left = std::max<storage::millis>(stall_timeout(st) - still_for, 0);
    why += "; the run ends in " + std::to_string((left + 999) / 1000) +
           " s if nothing moves";
  }
  return why;
}

std::string stranded_leases(const coordinator_core& st,
                            const metrics::pipeline_snapshot& s,
                            storage::millis now) {
  auto held = leases_not_moving(st, s, now, true);
  if (held.rows == 0)
    return {};
  bool one = held.relays == 1;
  auto text = plural(held.rows, "row stays", "rows stay") + " SENDING under " +
              (one ? "the lease " : "the leases ") + holders_text(held) +
              (one ? " (" + held.first_owner + ")" : "") + ": ";
  if (held.first_expiry > now)
    text += std::string{"they wait for "} + (one ? "it" : "them") +
            " to expire (" + (one ? "" : "the first ") +
            expiry_text(held.first_expiry, now) + ")";
  else
    text += one ? "it has expired" : "the first has expired";
  // Head of line: expired or not, rows behind a FAILED row of their
  // aggregate move only once it is retried.
  if (s.failed > 0)
    return text + "; a relay takes them over once the FAILED rows ahead of "
                  "them are retried (`outbox retry`)";
  return text + ", then a relay takes them over";
}

bool drained(const coordinator_core& st, const metrics::pipeline_snapshot& s) {
  const auto& run = st.setup.settings.run;
  if (!s.trouble.empty() || !st.load_done)
    return false;
  // A batch a relay of ours holds across a pause is published when it
  // wakes, though its rows may all be PUBLISHED by another relay by now.
  bool relays_done =
      run.relays == 0 || (s.pending + s.sending == 0 && st.paused_batches == 0);
  bool consumers_done =
      run.consumers == 0 || (s.pending + s.sending == 0 && s.queued == 0 &&
                             s.in_processing == 0 && s.queues_settled);
  return relays_done && consumers_done;
}

storage::millis stall_timeout(const coordinator_core& st) {
  const auto& s = st.setup.settings;
  return s.lease.stall_after() + s.run.idle_poll_max_ms + 1000;
}

bool full_read_due(const coordinator_core& st, storage::millis now,
                   bool marked) {
  // Without a change mark (PostgreSQL with track_counts off) the counts
  // say whether anything moved: a second between them is enough for a
  // stall timeout of seconds. But a count grows with the outbox (a
  // million published rows take the server most of a second), so they are
  // at least full_count_spacing times what the last one took apart, and at
  // most half the stall timeout: a stall is still seen within one and a
  // half timeouts.
  auto unmarked_interval = std::clamp<storage::millis>(
      full_count_spacing * st.full_read_took, 1000,
      std::max<storage::millis>(stall_timeout(st) / 2, 1000));
  return st.setup.until_drained &&
         (now - st.last_movement >= stall_timeout(st) ||
          (!marked && now - st.last_full_read >= unmarked_interval));
}

std::string stall_reason(const coordinator_core& st,
                         const metrics::pipeline_snapshot& s,
                         storage::millis now) {
  if (!s.trouble.empty() || now - st.last_movement < stall_timeout(st))
    return {};
  // The database refusing every commit of the writer (a role without the
  // privilege, a file it cannot write): the orders are retried in vain.
  // Any other trouble of the writer ends the run through its death.
  if (!st.load_done) {
    // Standing: refused at every retry for the whole stall timeout, not
    // one refusal long ago followed by a wait on a lock.
    auto refused = st.setup.metrics->writer_refusals.standing(now);
    if (!refused)
      return {};
    return "stalled: the database refuses the writer's commits: " +
           loggable(refused->words, 512) + "; " +
           std::to_string(st.setup.metrics->orders_placed.load()) + " of " +
           std::to_string(st.setup.settings.run.orders) +
           " orders placed, nothing moved for " +
           std::to_string(stall_timeout(st) / 1000) + " s";
  }
  if (drained(st, s))
    return {};
  auto still = " and nothing moved for " +
               std::to_string(stall_timeout(st) / 1000) + " s";
  // Redis refusing what the relays or consumers send explains whatever
  // else is stuck: name it first, in Redis's words.
  if (auto refused = st.setup.metrics->refusals.latest(now))
    return "stalled: " + refusal_text(*refused) + "; " +
           std::to_string(s.pending + s.sending) +
           " rows PENDING or SENDING, " + std::to_string(s.queued) +
           " entries queued, " + std::to_string(s.in_processing) +
           " in processing lists, nothing moved for " +
           std::to_string(stall_timeout(st) / 1000) + " s";
  if (s.failed > 0)
    return "stalled behind FAILED rows: " + std::to_string(s.failed) +
           " FAILED rows block " + std::to_string(s.pending + s.sending) +
           " later rows of their aggregates" + still +
           "; see `outbox status`, fix the cause, then `outbox retry`";
  if (s.queued + s.in_processing > 0)
    return "stalled: " + std::to_string(s.queued) + " entries queued and " +
           std::to_string(s.in_processing) +
           " in processing lists are not consumed" + still +
           "; see the consumers' warnings and `outbox status`";
  if (st.setup.settings.run.relays == 0)
    return "stalled: " + std::to_string(s.pending + s.sending) +
           " rows PENDING or SENDING are not published" + still +
           ", and no relay runs in this process to publish them; run "
           "relays (`outbox run --relays N`) before or beside it";
  return "stalled: " + std::to_string(s.pending + s.sending) +
         " rows PENDING or SENDING are not published" + still +
         "; see `outbox status`";
}

} // namespace outbox::actors
