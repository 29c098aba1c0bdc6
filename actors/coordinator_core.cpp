#include "actors/coordinator_core.hpp"

#include "actors/coordinator_presence.hpp"
#include "actors/coordinator_progress.hpp"
#include "actors/coordinator_recovery.hpp"
#include "actors/refusal.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace outbox::actors {

namespace {

worker_slot empty_slot(worker_slot::role kind, int index) {
  worker_slot slot;
  slot.kind = kind;
  slot.index = index;
  return slot;
}

/// A worker that could not set itself up on the slot's first start: the
/// run stops (exit 1) instead of restarting it. What failed there (no file
/// descriptor, no thread, an unreadable database) fails the restarts alike,
/// and a run short of the workers it was asked for is not the run wanted.
bool first_start_failed(const worker_slot& slot, const worker_exit& exit) {
  return slot.restarts == 0 && slot.incarnation == 0 &&
         exit.code == ec::setup_failed;
}

} // namespace

std::string worker_name(const std::string& prefix, worker_slot::role kind,
                        int index, int restarts) {
  return std::string{kind == worker_slot::role::relay ? "relay" : "consumer"} +
         "-" + prefix + "-" + std::to_string(index) + "-" +
         std::to_string(restarts);
}

void coordinator_core::begin(coordinator_setup given) {
  setup = std::move(given);
  started_at = setup.clock();
  last_movement = started_at;
  // The first progress after one interval: a count at once would read the
  // whole backlog before the run has done anything to report.
  last_progress = started_at;
  rate_at = started_at;
  // A refusal counts as standing once it has come back for as long as the
  // stall rule waits: the same patience for both.
  setup.metrics->refusals.set_horizon(stall_timeout(*this));
  setup.metrics->writer_refusals.set_horizon(stall_timeout(*this));
}

void coordinator_core::plan_slots() {
  const auto& run = setup.settings.run;
  for (int i = 0; i < run.relays; ++i)
    slots.push_back(empty_slot(worker_slot::role::relay, i));
  for (int i = 0; i < run.consumers; ++i)
    slots.push_back(empty_slot(worker_slot::role::consumer, i));
}

void coordinator_core::started(worker_slot& slot) {
  slot.running = true;
  ++alive;
}

consumer_setup
coordinator_core::consumer_setup_for(const worker_slot& slot) const {
  const auto& s = setup.settings;
  consumer_setup cs;
  cs.name = slot.name;
  cs.names = s.broker;
  cs.queues =
      s.broker.owned_partitions(static_cast<std::size_t>(slot.index),
                                static_cast<std::size_t>(s.run.consumers));
  cs.block_ms = s.run.consumer_block_ms;
  cs.fenced = !lock_token.empty();
  cs.crash = s.crash;
  cs.make_port = [make = setup.make_consume_port, token = lock_token] {
    return make(token);
  };
  cs.clock = setup.clock;
  cs.metrics = setup.metrics;
  return cs;
}

writer_setup coordinator_core::writer_setup_of() const {
  const auto& s = setup.settings;
  return {s.db, s.run.commit_batch, s.run.commit_delay_ms, setup.clock,
          setup.metrics};
}

std::string coordinator_core::run_id() const {
  return setup.name_prefix + "-" + std::to_string(setup.clock());
}

bool coordinator_core::begin_stop(std::string why) {
  if (!why.empty() && failure.empty()) {
    failure = std::move(why);
    spdlog::warn("coordinator {}: stopping the run: {}", setup.name_prefix,
                 failure);
  }
  if (stopping)
    return false;
  stopping = true;
  // Its checks end here: the process is alive while it stops (the final
  // read and the audit may take long), and says so (service_presence.hpp).
  setup.metrics->stopping = 1;
  return true;
}

void coordinator_core::child_down() {
  if (alive > 0)
    --alive;
}

down_next coordinator_core::worker_down(worker_slot& slot,
                                        const worker_exit& exit) {
  slot.running = false;
  if (exit.code == ec::consumer_fenced)
    return {down_next::what::lose_consumers, "the fence refused " + slot.name};
  if (first_start_failed(slot, exit))
    return {down_next::what::stop,
            "cannot start " + slot.name + ": " + exit.text};
  if (stopping || slot.parked)
    return {};
  auto budget = setup.settings.run.restart_budget;
  if (slot.restarts >= budget)
    return {down_next::what::stop,
            slot.name + " crashed more than run.restart_budget (" +
                std::to_string(budget) + ") times; last: " + exit.text};
  // The restart line says why, once the new incarnation is up.
  slot.down_reason = exit.text;
  spdlog::debug("coordinator {}: {} went down: {}", setup.name_prefix,
                slot.name, slot.down_reason);
  (slot.kind == worker_slot::role::relay ? setup.metrics->relay_restarts
                                         : setup.metrics->consumer_restarts)++;
  return {down_next::what::restart};
}

restart_next coordinator_core::restart(worker_slot& slot) {
  restart_next plan;
  if (stopping || slot.running || slot.parked)
    return plan;
  if (slot.kind == worker_slot::role::consumer) {
    try {
      plan.recovered = recover_lists_of(*this, slot.name);
    } catch (const std::exception& e) {
      if (is_fenced(e)) {
        // Frozen past the lock's ttl: those lists may be the new holder's
        // business now. The slot stays parked until the lock is ours again.
        recovery_refused(slot.name + "'s processing lists", e);
        plan.next = restart_next::what::lose_consumers;
        plan.why = "the fence refused a recovery";
        return plan;
      }
      // Retried every check interval while Redis is down: warn once.
      auto level = slot.recovery.failure_level(setup.clock());
      spdlog::log(level,
                  "coordinator {}: cannot restart {} until its in-flight "
                  "entries are recovered, retrying: {}",
                  setup.name_prefix, slot.name, e.what());
      plan.next = restart_next::what::retry_later;
      plan.delay_ms = setup.check_interval_ms;
      return plan;
    }
  }
  plan.next = restart_next::what::start;
  plan.old_name = slot.name;
  plan.why = "cannot restart " + slot.name;
  if (auto waited = slot.recovery.recovered(setup.clock()))
    plan.waited_ms = waited->lasted_ms;
  ++slot.restarts;
  ++slot.incarnation;
  return plan;
}

void coordinator_core::restarted(const worker_slot& slot,
                                 const restart_next& plan) const {
  std::string delay;
  if (plan.waited_ms > 0)
    delay =
        ", after waiting " + std::to_string(plan.waited_ms) + " ms for Redis";
  spdlog::info("coordinator {}: restarted {} as {} ({}{}; {} in-flight "
               "entries recovered)",
               setup.name_prefix, plan.old_name, slot.name, slot.down_reason,
               delay, plan.recovered);
}

void coordinator_core::recovery_refused(const std::string& what,
                                        const std::exception& e) {
  setup.metrics->fenced_moves_refused++;
  spdlog::warn("coordinator {}: the fence refused recovering {}, the "
               "consumers' lock is no longer this process's; its consumers "
               "stop until it acquires the lock anew: {}",
               setup.name_prefix, what, e.what());
  // The line above says why: losing the consumers need not warn again.
  consuming = false;
}

check_next coordinator_core::check_later() const {
  return {check_next::what::check_later, setup.check_interval_ms};
}

check_next coordinator_core::check() {
  keep_relay_note(*this);
  auto now = setup.clock();
  // Said once per stretch, bounded run or not: an unbounded run keeps
  // retrying, and this line is what tells the operator why nothing moves.
  if (auto refused = setup.metrics->refusals.standing_unannounced(now))
    spdlog::warn("coordinator {}: {}", setup.name_prefix,
                 refusal_text(*refused));
  bool progress_due =
      setup.progress && now - last_progress >= setup.progress_interval_ms;
  // The stores are counted in full to confirm a drain, to name what a
  // stalled run waits for, and for the progress line's counts, at most
  // every full_count_spacing times what the last count took. Otherwise
  // they are read lightly (drain_snapshot: whether any row is left, the
  // database's change mark, Redis's counts; constant time), which is all
  // the drain and stall rules need. Counting every row once a second cost
  // a relay-only run a fifth of its CPU, and grows with the outbox.
  paused_batches = setup.metrics->paused_batches.load();
  if (!setup.until_drained && !progress_due)
    return check_later();
  bool full = progress_due &&
              now - last_full_read >= full_count_spacing * full_read_took;
  auto light = probe->drain_snapshot();
  // Counted in full once a second while a refusal churns the mark.
  bool marked = light.database_mark.has_value() && !refusal_met(*this, now);
  if (marked)
    note_movement(*this, light, now);
  if (setup.until_drained)
    full = full || full_read_due(*this, now, marked) || drained(*this, light);
  if (!full) {
    if (progress_due) {
      last_progress = now;
      last_known = between_counts(*this, light);
      setup.progress(progress_of(*this, last_known, now));
    }
    return check_later();
  }
  auto snap = probe->snapshot();
  full_read_took = setup.clock() - now;
  last_full_read = now;
  last_known = with_last_known(snap, last_known);
  remember_count(*this);
  note_movement(*this, snap, now);
  if (progress_due) {
    last_progress = now;
    setup.progress(progress_of(*this, last_known, now));
  }
  if (!setup.until_drained)
    return check_later();
  if (drained(*this, snap)) {
    if (setup.progress && !progress_due)
      setup.progress(progress_of(*this, snap, now));
    return {check_next::what::stop};
  }
  if (auto why = stall_reason(*this, snap, now); !why.empty())
    return {check_next::what::stop, 0, why};
  return check_later();
}

bool coordinator_core::relay_ready() {
  return ++relays_ready >= setup.settings.run.relays;
}

bool coordinator_core::start_load(bool load_alive) {
  if (load_started || !load_alive || stopping)
    return false;
  load_started = true;
  return true;
}

} // namespace outbox::actors
