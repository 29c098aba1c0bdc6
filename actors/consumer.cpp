#include "actors/consumer.hpp"

#include "actors/log_lines.hpp"
#include "actors/messages.hpp"
#include "actors/outage.hpp"
#include "actors/refusal.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry_head.hpp"
#include "text/event_headers.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

void crash(consumer_actor* self, const char* point) {
  self->state.setup.metrics->injected_crashes++;
  spdlog::info("consumer {}: injected crash ({})", self->state.setup.name,
               point);
  self->quit(caf::make_error(ec::injected_crash, self->state.setup.name));
}

/// The event_id a dead-lettered entry names, if one can be read from it,
/// and the trace it travels in, if it names one: "<id> trace <trace id>".
std::string event_id_of(const std::string& entry) {
  auto head = broker::read_entry_head(entry);
  auto id = loggable(head.event_id.value_or(""));
  if (id.empty() || !head.traceparent)
    return id;
  auto trace = text::trace_id_from(*head.traceparent);
  return trace ? id + " trace " + *trace : id;
}

/// Counts what the inbox did with a batch, and each first delivery's
/// commit-to-processed latency from the committed_at the script read (no
/// JSON decoding here). `entries` are the batch's entries, outcomes in
/// their order.
void record(consumer_state& st, const std::vector<std::string>& entries,
            const std::vector<broker::applied_entry>& outcomes) {
  auto& metrics = *st.setup.metrics;
  auto now = st.setup.clock();
  std::vector<double> latencies;
  std::int64_t applied_here = 0;
  // (event or "unreadable", reason): one line per batch, not per entry, so
  // a producer pushing garbage cannot flood the log.
  std::vector<std::pair<std::string, std::string>> dead;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& applied = outcomes[i];
    switch (applied.result) {
    case broker::applied_entry::outcome::applied:
      ++applied_here;
      if (applied.order_violation)
        metrics.order_violations++;
      if (applied.committed_at > 0)
        latencies.push_back(static_cast<double>(now - applied.committed_at));
      break;
    case broker::applied_entry::outcome::duplicate:
      metrics.duplicates_absorbed++;
      break;
    case broker::applied_entry::outcome::dead_lettered:
      metrics.dead_lettered++;
      {
        auto event_id = i < entries.size() ? event_id_of(entries[i]) : "";
        dead.emplace_back(event_id.empty() ? "unreadable" : event_id,
                          applied.reason);
      }
      break;
    }
  }
  // Latencies before the counter: a scrape that sees the entries applied
  // sees their latencies too.
  metrics.commit_to_processed.record_many(latencies);
  metrics.applied += applied_here;
  if (!dead.empty())
    spdlog::warn("consumer {}: dead-lettered {} {} ({})", st.setup.name,
                 dead.size(), dead.size() == 1 ? "entry" : "entries",
                 bounded_list(dead, [](const auto& d) {
                   return "event " + d.first + ": " + d.second;
                 }));
}

/// How far a batch gets: entries [0, applied) are applied, [0, removed)
/// removed, then the consumer crashes at `crash` (none: the whole batch).
struct batch_fate {
  std::size_t applied;
  std::size_t removed;
  const char* crash = nullptr;
};

/// Rolls the crash points per entry, in the order a consumer taking one
/// entry at a time would (after pop, then after effect), so a probability
/// keeps its per-entry meaning and a crash costs only the entries from the
/// striking one on: a batch that crashes still makes progress, however big.
batch_fate fate_of(crash_injector& crashes, std::size_t entries) {
  for (std::size_t i = 0; i < entries; ++i) {
    if (crashes.strikes(crash_point::consumer_after_pop))
      return {i, i, "after pop"};
    if (crashes.strikes(crash_point::consumer_after_effect))
      return {i + 1, i, "after effect, before remove"};
  }
  return {entries, entries};
}

/// Applies a popped batch (one script call), then removes it (one call).
/// Returns false if the consumer crashed.
bool handle(consumer_actor* self, const std::string& processing,
            std::vector<std::string> batch) {
  auto& st = self->state;
  auto fate = fate_of(*st.crashes, batch.size());
  // A crash leaves the entries from the striking one on in the processing
  // list (after pop: unapplied; after effect: the striking one applied, so
  // its redelivery is absorbed as a duplicate). Recovery puts them back at
  // the head of the queue, in order.
  batch.resize(fate.applied);
  if (!batch.empty())
    record(st, batch, st.port->apply_batch(batch));
  batch.resize(fate.removed);
  if (!batch.empty()) {
    auto removed = st.port->remove_batch(processing, batch);
    if (removed < batch.size())
      spdlog::warn("consumer {}: {} of {} applied entries were no longer in "
                   "their processing list ({})",
                   st.setup.name, batch.size() - removed, batch.size(),
                   processing);
  }
  if (fate.crash) {
    crash(self, fate.crash);
    return false;
  }
  return true;
}

/// Puts entries left in our processing lists back at the head of their
/// queues. Only this consumer reads those queues, so order is kept.
void recover_own(consumer_actor* self) {
  auto& st = self->state;
  for (const auto& queue : st.setup.queues)
    st.setup.metrics->recovered_entries +=
        static_cast<std::int64_t>(st.port->recover(
            st.setup.names.processing_for(queue, st.setup.name), queue));
  st.must_recover = false;
}

/// Redis answered: ends an outage the consumer saw, with one line; and
/// likewise for the effects' database.
void redis_answered(consumer_state& st) {
  st.redis.log_end(st.setup.clock, "consumer", st.setup.name, "Redis reachable",
                   "failed attempts");
  st.sink.log_end(st.setup.clock, "consumer", st.setup.name,
                  "effects' database reachable", "failed attempts");
}

/// After trouble with `what` (Redis, the effects' database): entries may
/// sit unapplied in a processing list, so the next try recovers them
/// first, after a doubling delay. Said once per outage: the retries go on.
void retry_after(consumer_actor* self, outage& trouble, const char* what,
                 const char* why) {
  auto& st = self->state;
  st.setup.metrics->consumer_errors++;
  st.must_recover = true;
  st.retry_delay_ms = std::clamp(st.retry_delay_ms * 2, 50, 2000);
  spdlog::log(trouble.failure_level(st.setup.clock()),
              "consumer {}: {} trouble, retrying in {} ms: {}", st.setup.name,
              what, st.retry_delay_ms, why);
  self->delayed_send(self, milliseconds(st.retry_delay_ms), pop_atom_v);
}

enum class burst_result { crashed, busy, idle };

/// Counts and reports the entries the last pop set aside for their size:
/// the script dead-lettered them without handing them over. Returns
/// whether there were any.
bool report_set_aside(consumer_state& st) {
  auto sizes = st.port->take_set_aside();
  if (sizes.empty())
    return false;
  st.setup.metrics->dead_lettered += static_cast<std::int64_t>(sizes.size());
  spdlog::warn(
      "consumer {}: dead-lettered {} {} over broker.max_consume_bytes "
      "({}) without reading {} ({} bytes)",
      st.setup.name, sizes.size(), sizes.size() == 1 ? "entry" : "entries",
      st.setup.names.max_consume_bytes, sizes.size() == 1 ? "it" : "them",
      bounded_list(sizes, [](std::size_t n) { return std::to_string(n); }));
  return true;
}

/// Handles one batch from the first owned queue, round-robin, that has
/// entries; when all are empty, waits for one of their doorbells.
burst_result burst(consumer_actor* self) {
  auto& st = self->state;
  const auto& queues = st.setup.queues;
  auto max_entries = static_cast<std::size_t>(std::max(1, st.setup.burst));
  bool set_aside = false;
  for (std::size_t tried = 0; tried < queues.size(); ++tried) {
    const auto& queue = queues[st.next_queue];
    st.next_queue = (st.next_queue + 1) % queues.size();
    auto processing = st.setup.names.processing_for(queue, st.setup.name);
    auto batch = st.port->pop_batch(queue, processing, max_entries,
                                    st.setup.batch_bytes);
    // Not `||`: the report must run after every pop.
    set_aside = report_set_aside(st) || set_aside;
    if (!batch.empty())
      return handle(self, processing, std::move(batch)) ? burst_result::busy
                                                        : burst_result::crashed;
  }
  // A queue whose head was only oversized entries may hold more behind.
  if (set_aside)
    return burst_result::busy;
  // All empty: wait on all their doorbells at once, then look again. Never
  // a blocking pop (BLMOVE): it cannot check the fence, and it would hand
  // over an entry of any size, where pop_batch sets aside one over
  // broker.max_consume_bytes unread.
  return st.port->wait_for_doorbell(st.doorbells, st.setup.block_ms)
             ? burst_result::busy
             : burst_result::idle;
}

} // namespace

caf::behavior consumer(consumer_actor* self, consumer_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.crashes = std::make_unique<crash_injector>(st.setup.crash, st.setup.name);
  for (const auto& queue : st.setup.queues)
    st.doorbells.push_back(st.setup.names.doorbell_for(queue));
  try {
    st.port = st.setup.make_port();
    st.port->on_sink_commit([self] {
      if (self->state.crashes->strikes(crash_point::consumer_after_sink_commit))
        throw injected_crash{};
    });
  } catch (const std::exception& e) {
    spdlog::error("consumer {}: cannot start: {}", st.setup.name, e.what());
    self->quit(caf::make_error(ec::setup_failed, st.setup.name, e.what()));
    return {};
  }
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      spdlog::warn("consumer {}: failed unexpectedly: {}",
                   self->state.setup.name, e.what());
    }
    return caf::make_error(ec::broker_unavailable, self->state.setup.name);
  });
  if (st.setup.queues.empty()) {
    // More consumers than partitions: nothing to own. Stay up, idle, so the
    // run's shape is what the user asked for.
    spdlog::warn("consumer {}: owns no partition, staying idle (more "
                 "consumers than broker.partitions)",
                 st.setup.name);
    return {[](pop_atom) {}};
  }
  self->send(self, pop_atom_v);
  return {
      [self](pop_atom) {
        auto& st = self->state;
        try {
          if (st.must_recover)
            recover_own(self);
          auto result = burst(self);
          st.retry_delay_ms = 0;
          redis_answered(st);
          if (result == burst_result::busy)
            self->send(self, pop_atom_v);
          else if (result == burst_result::idle)
            // The blocking pop already waited; the tiny delay only keeps an
            // empty queue from spinning where pops cannot block (tests).
            self->delayed_send(self, milliseconds(1), pop_atom_v);
        } catch (const injected_crash&) {
          // Its batch stays in the processing list: recovered, the sink's
          // inbox rows absorb what it committed, and Redis records it.
          crash(self, "after its database's commit, before Redis recorded it");
        } catch (const effects_unavailable& e) {
          // The consumer's own database: the batch stays in the processing
          // list, put back at the queue's head by the recovery before the
          // next pop.
          retry_after(self, st.sink, "effects' database", e.what());
        } catch (const broker::broker_error& e) {
          if (e.code() == broker::broker_errc::fenced) {
            // Another process took the queues over (and our in-flight
            // entries with them): nothing here may move or apply any more.
            // Pops, applies, removes and recoveries are all refused alike.
            st.setup.metrics->fenced_moves_refused++;
            spdlog::warn("consumer {}: stopping, another process consumes "
                         "the queues now: {}",
                         st.setup.name, e.what());
            self->quit(caf::make_error(ec::consumer_fenced, st.setup.name));
            return;
          }
          note_outage(st.setup.metrics->outage_retries, e);
          note_refusal(st.setup.metrics->refusals, e, st.setup.clock());
          retry_after(self, st.redis, "Redis", e.what());
        }
      },
  };
}

} // namespace outbox::actors
