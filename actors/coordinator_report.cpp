#include "actors/coordinator_report.hpp"

#include "actors/coordinator_presence.hpp"
#include "actors/coordinator_progress.hpp"
#include "actors/messages.hpp"
#include "actors/outage.hpp"
#include "metrics/run_report_json.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace outbox::actors {

namespace {

/// A failed read of the final state faster than this met a dropped
/// connection, not a server that does not answer.
constexpr storage::millis quick_failure_ms = 1000;

/// The final state and the audit, with `outage` set when what went wrong
/// was an outage that waiting can end.
metrics::run_outcome read_outcome(coordinator_state& st, bool& outage) {
  metrics::run_outcome outcome;
  outcome.failure = st.failure;
  outcome.relays = st.setup.settings.run.relays;
  outcome.consumers = st.setup.settings.run.consumers;
  outcome.seconds = static_cast<double>(st.ended_at - st.started_at) / 1000.0;
  outcome.orders_target = st.setup.settings.run.orders;
  outcome.interrupted = st.interrupted;
  outcome.role = st.setup.role;
  // A service stopped by a signal answers for itself only: the store-wide
  // audit, which other processes' doings can fail, is `outbox verify`'s.
  outcome.audited = st.setup.until_drained;
  // An interrupted run reports what it left undone instead.
  outcome.must_be_drained = st.setup.until_drained &&
                            st.setup.settings.run.relays > 0 && !st.interrupted;
  outage = false;
  if (!st.probe) // the run could not start: failure says why
    return outcome;
  outcome.final_state = st.probe->snapshot();
  outage = outcome.final_state.outage;
  outcome.stranded_leases =
      stranded_leases(st, outcome.final_state, st.setup.clock());
  if (!outcome.final_state.trouble.empty() || !outcome.audited)
    return outcome;
  try {
    outcome.audit = st.probe->audit();
  } catch (const std::exception& e) {
    outcome.final_state.trouble = std::string{"audit: "} + e.what();
    outage = is_outage(e);
  }
  return outcome;
}

/// Our consumers are down: a waiting process takes over at once rather
/// than after the lock's ttl. A failure only costs it that wait. A standby
/// releases too: its token names no lock, but the release drops its note
/// from the consumer processes `outbox status` lists.
void release_consumer_lock(coordinator_state& st) {
  if (!st.probe || st.setup.consumer_lock_holder.empty() ||
      (st.lock_token.empty() && st.standby_behind.empty()))
    return;
  auto token = st.lock_token.empty()
                   ? st.setup.consumer_lock_holder + "#standby"
                   : st.lock_token;
  try {
    st.probe->release_consumer_lock(token);
  } catch (const std::exception& e) {
    spdlog::debug("coordinator {}: consumers' lock not released: {}",
                  st.setup.name_prefix, e.what());
  }
}

void write_report(coordinator_actor* self) {
  auto& st = self->state;
  bool outage = false;
  auto began = st.setup.clock();
  auto outcome = read_outcome(st, outage);
  // A session the server ended since its last use fails its first read at
  // once, and the store connects anew for the next: a stop that does not
  // wait out outages still gives such a read one more try. A read that
  // failed slowly (a connect timing out) is not tried again: that stop
  // would then wait twice.
  if (outage && st.stop_waiting && st.setup.clock() - began < quick_failure_ms)
    outcome = read_outcome(st, outage);
  auto now = st.setup.clock();
  if (outage && !st.stop_waiting &&
      now - st.ended_at < st.setup.final_read_patience_ms) {
    if (st.final_read.failed(now))
      spdlog::warn("coordinator {}: waiting up to {} s to read the final "
                   "state: {}",
                   st.setup.name_prefix, st.setup.final_read_patience_ms / 1000,
                   outcome.final_state.trouble);
    self->delayed_send(self,
                       std::chrono::milliseconds(st.setup.check_interval_ms),
                       final_read_atom_v);
    return;
  }
  if (!outcome.final_state.trouble.empty() && st.final_read.ongoing())
    spdlog::warn("coordinator {}: gave up reading the final state after "
                 "{} ms",
                 st.setup.name_prefix, now - st.ended_at);
  else if (auto waited = st.final_read.recovered(now))
    spdlog::info("coordinator {}: read the final state after waiting {} ms",
                 st.setup.name_prefix, waited->lasted_ms);
  // JSON from here on: the answer leaves the coordinator for the tool,
  // which prints it as it is (run_report_json.hpp).
  st.report =
      metrics::to_json(metrics::run_report_of(outcome, *st.setup.metrics));
  spdlog::info("coordinator {}: stopped after {:.1f} s ({})",
               st.setup.name_prefix, outcome.seconds,
               st.failure.empty() ? "no failure" : "failed, see above");
  if (st.run_request)
    st.run_request->deliver(*st.report);
  // A run that failed while starting has its report before anyone could
  // ask: it waits for run_atom (or a shutdown), since quitting now would
  // leave the asker no answer.
  if (st.run_request || !st.starting)
    self->quit();
}

} // namespace

void finish_if_all_down(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.stopping || st.alive > 0 || st.report || st.all_down)
    return;
  st.all_down = true;
  st.ended_at = st.setup.clock();
  release_consumer_lock(st);
  note_relays_stopped(st);
  write_report(self);
}

void retry_final_read(coordinator_actor* self) {
  if (self->state.all_down && !self->state.report)
    write_report(self);
}

void stop_waiting(coordinator_actor* self) {
  auto& st = self->state;
  st.stop_waiting = true;
  retry_final_read(self);
}

} // namespace outbox::actors
