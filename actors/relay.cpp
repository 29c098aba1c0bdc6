#include "actors/relay.hpp"

#include "actors/log_lines.hpp"
#include "actors/messages.hpp"
#include "actors/outage.hpp"
#include "actors/relay_log.hpp"
#include "actors/relay_refusal.hpp"
#include "actors/relay_settle.hpp"
#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

/// Schedules the next cycle after `delay_ms` (0: at once).
void schedule_claim(relay_actor* self, int delay_ms) {
  auto& st = self->state;
  auto gen = ++st.generation;
  st.claim_queued = delay_ms == 0;
  if (delay_ms == 0)
    self->send(self, claim_atom_v, gen);
  else
    self->delayed_send(self, milliseconds(delay_ms), claim_atom_v, gen);
}

/// Nothing to do: poll again later, backing off while idle.
void schedule_idle(relay_actor* self) {
  auto& st = self->state;
  st.idle_delay_ms =
      st.idle_delay_ms == 0
          ? st.setup.poll_interval_ms
          : std::min(st.idle_delay_ms * 2, st.setup.idle_poll_max_ms);
  schedule_claim(self, st.idle_delay_ms);
}

/// An injected crash: die at once, leaving every lease behind.
void crash(relay_actor* self, const char* point) {
  self->state.setup.metrics->injected_crashes++;
  spdlog::info("relay {}: injected crash ({})", self->state.setup.name, point);
  self->quit(caf::make_error(ec::injected_crash, self->state.setup.name));
}

/// True when the lease of the batch ran out by the relay's own monotonic
/// clock (a process frozen by SIGSTOP, a host suspended, between claim and
/// push): then it is not pushed, whatever the wall clock says, since
/// another relay may hold the rows now. The rows are released (fenced: a
/// no-op where another took them over) and the drop is counted.
bool lease_ran_out(relay_actor* self, const storage::claim& claimed) {
  auto& st = self->state;
  auto held_ms = st.setup.monotonic() - st.claimed_monotonic;
  if (!st.setup.lease.ran_out(held_ms))
    return false;
  auto& metrics = *st.setup.metrics;
  metrics.expired_leases_dropped +=
      static_cast<std::int64_t>(claimed.events.size());
  spdlog::info("relay {}: lease ran out {} ms after the claim, by this "
               "relay's own clock, before publishing: not pushing {} rows "
               "(events: {})",
               st.setup.name, held_ms, claimed.events.size(),
               describe_rows(claimed.events));
  // Handing them back refunds the claim's attempt; a database that does
  // not answer gets them at the next cycle (store_error: back off).
  settle(self, unsettled_batch{{}, 0, claimed.leases()});
  return true;
}

/// Publishes a claimed batch and acknowledges it. Returns false when the
/// relay crashed or must back off (the next cycle is scheduled here then).
/// A zombie (an injected pause) stands for a pause the relay cannot see,
/// such as a paused virtual machine: it skips the lease checks, and the
/// fence must stop it.
bool publish_and_ack(relay_actor* self, const storage::claim& claimed,
                     bool zombie) {
  auto& st = self->state;
  auto& metrics = *st.setup.metrics;
  if (!zombie && lease_ran_out(self, claimed)) {
    schedule_claim(self, 0);
    return false;
  }
  auto now = st.setup.clock();
  // A lease running out is renewed before the broker call; a zombie does
  // not know it slept, which is exactly what the fence must catch. Timed
  // by this relay's monotonic clock since the claim, not by lease_until:
  // on PostgreSQL that comes from the database's clock, and a skew between
  // the hosts would move the renewal.
  auto held_ms = st.setup.monotonic() - st.claimed_monotonic;
  if (!zombie && st.setup.lease.renewal_due(held_ms)) {
    int held = 0;
    try {
      held = st.store->renew(st.setup.name, claimed.leases(),
                             st.setup.lease.lease_until(now));
    } catch (const storage::store_error&) {
      // Not published: hand the rows back once the database answers.
      st.unsettled = unsettled_batch{{}, 0, claimed.leases()};
      throw;
    }
    if (held == 0) {
      // Every lease was taken over while we were away (a stopped process):
      // the fence refused the renewal, so stop touching these rows.
      metrics.fenced_acks_rejected +=
          static_cast<std::int64_t>(claimed.events.size());
      spdlog::info("relay {}: lease lost on {} rows before publishing "
                   "(taken over), dropping the batch (events: {})",
                   st.setup.name, claimed.events.size(),
                   describe_rows(claimed.events));
      schedule_claim(self, 0);
      return false;
    }
  }
  storage::claim c = claimed;
  try {
    try {
      st.publisher->publish(to_entries(c, now));
    } catch (const broker::broker_error& e) {
      if (e.code() == broker::broker_errc::unavailable)
        throw;
      // Counted once it is known to be a refusal: isolate_refused may find
      // an outage instead, which the handler below counts.
      c = isolate_refused(self, c, now, e);
      metrics.publish_errors++;
    }
  } catch (const broker::broker_error& e) {
    // Not the rows' fault: hand them back without spending an attempt.
    // Redis may have taken the batch anyway; the inbox absorbs that.
    metrics.publish_errors++;
    note_outage(metrics.outage_retries, e);
    // Once per outage: every idle poll retries while Redis is down (or
    // refuses the command: isolate_refused noted it for the coordinator).
    auto level = st.redis.failure_level(st.setup.clock());
    spdlog::log(level,
                "relay {}: Redis {}, releasing {} rows and retrying "
                "(events: {}): {}",
                st.setup.name,
                is_outage(e) ? "unavailable" : "refuses the command",
                c.events.size(), describe_rows(c.events), e.what());
    settle(self, unsettled_batch{{}, 0, c.leases()});
    schedule_idle(self);
    return false;
  }
  redis_answered(st);
  server_states_cleared();
  metrics.enqueued += static_cast<std::int64_t>(c.events.size());
  if (st.crashes->strikes(crash_point::relay_after_publish)) {
    crash(self, "after publish, before ack");
    return false;
  }
  settle(self, unsettled_batch{std::move(c), st.setup.clock(), {}});
  return true;
}

/// One cycle: claim, maybe break, publish, ack, schedule the next.
void run_cycle(relay_actor* self) {
  auto& st = self->state;
  auto& metrics = *st.setup.metrics;
  settle_left_over(self);
  st.claimed_monotonic = st.setup.monotonic();
  auto c =
      st.store->claim_batch(st.setup.name, st.setup.clock(), st.setup.lease);
  metrics.claims++;
  metrics.claimed_rows += static_cast<std::int64_t>(c.events.size());
  metrics.lease_takeovers += c.taken_over;
  metrics.rows_failed += c.failed;
  if (c.taken_over > 0) {
    std::vector<storage::claimed_event> taken;
    std::map<std::string, int> previous_owners;
    for (const auto& e : c.events)
      if (e.taken_over) {
        taken.push_back(e);
        previous_owners[e.previous_owner]++;
      }
    spdlog::info("relay {}: took over {} rows of expired leases (from: {}; "
                 "events: {})",
                 st.setup.name, c.taken_over,
                 bounded_list(previous_owners,
                              [](const auto& owner) {
                                return owner.first + " (" +
                                       std::to_string(owner.second) + ")";
                              }),
                 describe_rows(taken));
  }
  for (const auto& row : c.given_up)
    log_failed(st.setup.name, row);
  if (c.events.empty()) {
    // The walk stopped at its bound: rows further on may be claimable. Not
    // at once: when everything is blocked that would spin on the write lock.
    if (c.more_candidates)
      schedule_claim(self, st.setup.poll_interval_ms);
    else
      schedule_idle(self);
    return;
  }
  st.idle_delay_ms = 0;
  if (st.crashes->strikes(crash_point::relay_after_claim))
    return crash(self, "after claim");
  if (st.crashes->strikes(crash_point::relay_pause)) {
    // Freeze past the lease without blocking the thread: only the resume
    // message is acted on until then (claims are stale, nudges ignored).
    metrics.zombie_pauses++;
    auto pause_ms = st.setup.lease.past_lease_pause();
    spdlog::info("relay {}: injected pause (crash.relay_pause): frozen for "
                 "{} ms, past its {} ms lease, holding {} rows (events: {})",
                 st.setup.name, pause_ms, st.setup.lease.ttl, c.events.size(),
                 describe_rows(c.events));
    st.paused.emplace(paused_batch{
        std::move(c), outbox::metrics::gauge_hold{metrics.paused_batches}});
    self->delayed_send(self, milliseconds(pause_ms), resume_atom_v);
    return;
  }
  if (!publish_and_ack(self, c, false))
    return;
  auto full = static_cast<int>(c.events.size()) >= st.setup.lease.batch;
  if (full || c.more_candidates)
    schedule_claim(self, 0);
  else
    schedule_claim(self, st.setup.poll_interval_ms);
}

/// Runs a cycle, turning database trouble into a backoff instead of a crash.
void guarded_cycle(relay_actor* self) {
  try {
    run_cycle(self);
  } catch (const storage::store_error& e) {
    note_outage(self->state.setup.metrics->outage_retries, e);
    database_failed(self->state, "", e.what());
    schedule_idle(self);
    return;
  }
  database_answered(self->state);
}

} // namespace

caf::behavior relay(relay_actor* self, relay_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  if (!st.setup.monotonic)
    st.setup.monotonic = [] {
      timespec t{};
      ::clock_gettime(CLOCK_BOOTTIME, &t);
      return static_cast<storage::millis>(t.tv_sec) * 1000 +
             t.tv_nsec / 1'000'000;
    };
  st.crashes = std::make_unique<crash_injector>(st.setup.crash, st.setup.name);
  try {
    st.db = storage::connect(st.setup.db, storage::open_mode::as_is);
    st.store = st.db->leases();
    st.publisher = st.setup.make_publisher();
  } catch (const std::exception& e) {
    spdlog::error("relay {}: cannot start: {}", st.setup.name, e.what());
    self->quit(caf::make_error(ec::setup_failed, st.setup.name, e.what()));
    return {};
  }
  self->set_exit_handler([self](caf::exit_msg& msg) {
    // Graceful stop: hand back what a zombie pause still holds so another
    // relay takes it at once instead of after the ttl.
    auto& st = self->state;
    if (st.paused) {
      try {
        st.setup.metrics->released +=
            st.store->release(st.setup.name, st.paused->claimed.leases());
      } catch (const std::exception& e) {
        spdlog::warn("relay {}: releasing {} paused rows on shutdown failed, "
                     "they wait for their lease to expire (events: {}): {}",
                     st.setup.name, st.paused->claimed.events.size(),
                     describe_rows(st.paused->claimed.events), e.what());
      }
      st.paused.reset();
    }
    if (st.unsettled) {
      try {
        settle(self);
      } catch (const std::exception& e) {
        spdlog::warn("relay {}: settling {} rows on shutdown failed: they "
                     "wait for their leases to run out (events: {}): {}",
                     st.setup.name,
                     st.unsettled->published.events.size() +
                         st.unsettled->unpublished.size(),
                     describe_rows(st.unsettled->published.events), e.what());
      }
    }
    self->quit(msg.reason);
  });
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      spdlog::warn("relay {}: failed unexpectedly: {}", self->state.setup.name,
                   e.what());
    }
    return caf::make_error(ec::store_failure, self->state.setup.name);
  });
  schedule_claim(self, 0);
  return {
      [self](claim_atom, std::uint64_t gen) {
        auto& st = self->state;
        if (gen != st.generation || st.paused)
          return;
        st.claim_queued = false;
        guarded_cycle(self);
        if (!st.told_ready && st.setup.report_to) {
          st.told_ready = true;
          self->send(st.setup.report_to, ready_atom_v);
        }
      },
      [self](nudge_atom) {
        auto& st = self->state;
        if (!st.claim_queued && !st.paused)
          schedule_claim(self, 0);
      },
      [self](resume_atom) {
        auto& st = self->state;
        if (!st.paused)
          return;
        // Counted as paused until its publish is done (the end of this
        // handler): a bounded run must not end before it lands.
        auto held = std::move(*st.paused);
        st.paused.reset();
        const auto& c = held.claimed;
        spdlog::info("relay {}: resumed after the injected pause, publishing "
                     "{} rows whose lease may be another relay's by now (the "
                     "fence decides)",
                     st.setup.name, c.events.size());
        try {
          if (publish_and_ack(self, c, true))
            schedule_claim(self, 0);
        } catch (const storage::store_error& e) {
          database_failed(st, " after pause", e.what());
          schedule_idle(self);
          return;
        }
        database_answered(st);
      },
  };
}

} // namespace outbox::actors
