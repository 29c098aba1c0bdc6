#include "actors/consumer_core.hpp"

#include "actors/log_lines.hpp"
#include "actors/outage.hpp"
#include "actors/refusal.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry_head.hpp"
#include "text/event_headers.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

/// The event_id a dead-lettered entry names, if one can be read from it,
/// and the trace it travels in, if it names one: "<id> trace <trace id>".
std::string dead_entry_name(const std::string& entry) {
  auto head = broker::read_entry_head(entry);
  auto id = loggable(head.event_id.value_or(""));
  if (id.empty() || !head.traceparent)
    return id;
  auto trace = text::trace_id_from(*head.traceparent);
  return trace ? id + " trace " + *trace : id;
}

/// How far a batch gets: entries [0, applied) are applied, [0, removed)
/// removed, then the consumer crashes at `crash` (none: the whole batch).
struct consumer_batch_fate {
  std::size_t applied;
  std::size_t removed;
  const char* crash = nullptr;
};

/// Rolls the crash points per entry, in the order a consumer taking one
/// entry at a time would (after pop, then after effect), so a probability
/// keeps its per-entry meaning and a crash costs only the entries from the
/// striking one on: a batch that crashes still makes progress, however big.
consumer_batch_fate consumer_fate_of(crash_injector& crashes,
                                     std::size_t entries) {
  for (std::size_t i = 0; i < entries; ++i) {
    if (crashes.strikes(crash_point::consumer_after_pop))
      return {i, i, "after pop"};
    if (crashes.strikes(crash_point::consumer_after_effect))
      return {i + 1, i, "after effect, before remove"};
  }
  return {entries, entries};
}

} // namespace

consumer_core::consumer_core(consumer_setup setup)
    : setup_(std::move(setup)),
      crashes_(std::make_unique<crash_injector>(setup_.crash, setup_.name)) {
  for (const auto& queue : setup_.queues)
    doorbells_.push_back(setup_.names.doorbell_for(queue));
}

consumer_core::~consumer_core() = default;

consumer_start consumer_core::start() {
  try {
    port_ = setup_.make_port();
    port_->on_sink_commit([crashes = crashes_.get()] {
      if (crashes->strikes(crash_point::consumer_after_sink_commit))
        throw injected_crash{};
    });
  } catch (const std::exception& e) {
    spdlog::error("consumer {}: cannot start: {}", setup_.name, e.what());
    return {consumer_start::how::failed, e.what()};
  }
  if (setup_.queues.empty()) {
    spdlog::warn("consumer {}: owns no partition, staying idle (more "
                 "consumers than broker.partitions)",
                 setup_.name);
    return {consumer_start::how::idle};
  }
  return {consumer_start::how::consuming};
}

consumer_next consumer_core::step() {
  try {
    if (must_recover_)
      recover_own();
    auto result = burst();
    retry_delay_ms_ = 0;
    redis_answered();
    if (result == burst_result::crashed)
      return {consumer_next::what::stop, 0, ec::injected_crash};
    if (result == burst_result::busy)
      return {consumer_next::what::step_now};
    // The doorbell wait already waited; the tiny delay only keeps an empty
    // queue from spinning where waits cannot block (tests).
    return {consumer_next::what::step_later, 1};
  } catch (const injected_crash&) {
    // Its batch stays in the processing list: recovered, the sink's inbox
    // rows absorb what it committed, and Redis records it.
    return crash("after its database's commit, before Redis recorded it");
  } catch (const effects_unavailable& e) {
    // The consumer's own database: the batch stays in the processing list,
    // put back at the queue's head by the recovery before the next pop.
    return retry_after(sink_, "effects' database", e.what());
  } catch (const broker::broker_error& e) {
    if (e.code() == broker::broker_errc::fenced) {
      // Another process took the queues over (and our in-flight entries
      // with them): nothing here may move or apply any more. Pops,
      // applies, removes and recoveries are all refused alike.
      setup_.metrics->fenced_moves_refused++;
      spdlog::warn("consumer {}: stopping, another process consumes the "
                   "queues now: {}",
                   setup_.name, e.what());
      return {consumer_next::what::stop, 0, ec::consumer_fenced};
    }
    note_outage(setup_.metrics->outage_retries, e);
    note_refusal(setup_.metrics->refusals, e, setup_.clock());
    return retry_after(redis_, "Redis", e.what());
  }
}

consumer_next consumer_core::crash(const char* point) {
  setup_.metrics->injected_crashes++;
  spdlog::info("consumer {}: injected crash ({})", setup_.name, point);
  return {consumer_next::what::stop, 0, ec::injected_crash};
}

/// Counts what the inbox did with a batch, and each first delivery's
/// commit-to-processed latency from the committed_at the script read (no
/// JSON decoding here). `entries` are the batch's entries, outcomes in
/// their order.
void consumer_core::record(const std::vector<std::string>& entries,
                           const std::vector<broker::applied_entry>& outcomes) {
  auto& metrics = *setup_.metrics;
  auto now = setup_.clock();
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
        auto event_id = i < entries.size() ? dead_entry_name(entries[i]) : "";
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
    spdlog::warn("consumer {}: dead-lettered {} {} ({})", setup_.name,
                 dead.size(), dead.size() == 1 ? "entry" : "entries",
                 bounded_list(dead, [](const auto& d) {
                   return "event " + d.first + ": " + d.second;
                 }));
}

/// Applies a popped batch (one script call), then removes it (one call).
/// Returns false if the consumer crashed.
bool consumer_core::handle(const std::string& processing,
                           std::vector<std::string> batch) {
  auto fate = consumer_fate_of(*crashes_, batch.size());
  // A crash leaves the entries from the striking one on in the processing
  // list (after pop: unapplied; after effect: the striking one applied, so
  // its redelivery is absorbed as a duplicate). Recovery puts them back at
  // the head of the queue, in order.
  batch.resize(fate.applied);
  if (!batch.empty())
    record(batch, port_->apply_batch(batch));
  batch.resize(fate.removed);
  if (!batch.empty()) {
    auto removed = port_->remove_batch(processing, batch);
    if (removed < batch.size())
      spdlog::warn("consumer {}: {} of {} applied entries were no longer in "
                   "their processing list ({})",
                   setup_.name, batch.size() - removed, batch.size(),
                   processing);
  }
  if (fate.crash) {
    crash(fate.crash);
    return false;
  }
  return true;
}

/// Puts entries left in our processing lists back at the head of their
/// queues. Only this consumer reads those queues, so order is kept.
void consumer_core::recover_own() {
  for (const auto& queue : setup_.queues)
    setup_.metrics->recovered_entries += static_cast<std::int64_t>(
        port_->recover(setup_.names.processing_for(queue, setup_.name), queue));
  must_recover_ = false;
}

/// Redis answered: ends an outage the consumer saw, with one line; and
/// likewise for the effects' database.
void consumer_core::redis_answered() {
  redis_.log_end(setup_.clock, "consumer", setup_.name, "Redis reachable",
                 "failed attempts");
  sink_.log_end(setup_.clock, "consumer", setup_.name,
                "effects' database reachable", "failed attempts");
}

/// After trouble with `what` (Redis, the effects' database): entries may
/// sit unapplied in a processing list, so the next try recovers them
/// first, after a doubling delay. Said once per outage: the retries go on.
consumer_next consumer_core::retry_after(outage& trouble, const char* what,
                                         const char* why) {
  setup_.metrics->consumer_errors++;
  must_recover_ = true;
  retry_delay_ms_ = std::clamp(retry_delay_ms_ * 2, 50, 2000);
  spdlog::log(trouble.failure_level(setup_.clock()),
              "consumer {}: {} trouble, retrying in {} ms: {}", setup_.name,
              what, retry_delay_ms_, why);
  return {consumer_next::what::step_later, retry_delay_ms_};
}

/// Counts and reports the entries the last pop set aside for their size:
/// the script dead-lettered them without handing them over. Returns
/// whether there were any.
bool consumer_core::report_set_aside() {
  auto sizes = port_->take_set_aside();
  if (sizes.empty())
    return false;
  setup_.metrics->dead_lettered += static_cast<std::int64_t>(sizes.size());
  spdlog::warn(
      "consumer {}: dead-lettered {} {} over broker.max_consume_bytes "
      "({}) without reading {} ({} bytes)",
      setup_.name, sizes.size(), sizes.size() == 1 ? "entry" : "entries",
      setup_.names.max_consume_bytes, sizes.size() == 1 ? "it" : "them",
      bounded_list(sizes, [](std::size_t n) { return std::to_string(n); }));
  return true;
}

/// Handles one batch from the first owned queue, round-robin, that has
/// entries; when all are empty, waits for one of their doorbells.
consumer_core::burst_result consumer_core::burst() {
  const auto& queues = setup_.queues;
  auto max_entries = static_cast<std::size_t>(std::max(1, setup_.burst));
  bool set_aside = false;
  for (std::size_t tried = 0; tried < queues.size(); ++tried) {
    const auto& queue = queues[next_queue_];
    next_queue_ = (next_queue_ + 1) % queues.size();
    auto processing = setup_.names.processing_for(queue, setup_.name);
    auto batch =
        port_->pop_batch(queue, processing, max_entries, setup_.batch_bytes);
    // Not `||`: the report must run after every pop.
    set_aside = report_set_aside() || set_aside;
    if (!batch.empty())
      return handle(processing, std::move(batch)) ? burst_result::busy
                                                  : burst_result::crashed;
  }
  // A queue whose head was only oversized entries may hold more behind.
  if (set_aside)
    return burst_result::busy;
  // All empty: wait on all their doorbells at once, then look again. Never
  // a blocking pop (BLMOVE): it cannot check the fence, and it would hand
  // over an entry of any size, where pop_batch sets aside one over
  // broker.max_consume_bytes unread.
  return port_->wait_for_doorbell(doorbells_, setup_.block_ms)
             ? burst_result::busy
             : burst_result::idle;
}

} // namespace outbox::actors
