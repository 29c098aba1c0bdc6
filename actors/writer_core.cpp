#include "actors/writer_core.hpp"

#include "actors/log_lines.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

ec writer_code_of(const storage::store_error& e) {
  switch (e.code()) {
  case storage::store_errc::busy:
    return ec::store_busy;
  case storage::store_errc::invalid_input:
    return ec::invalid_input;
  case storage::store_errc::outcome_unknown:
    return ec::store_outcome_unknown;
  default:
    return ec::store_failure;
  }
}

/// A group did not commit: counted, and every requester gets the error.
/// Database trouble is warned about once per outage (every retry of the
/// load generator fails alike until it ends); a request the store refused
/// as invalid is its requester's business.
template <class Receipt>
std::vector<batch_outcome<Receipt>>
not_committed(const writer_setup& setup, outage& database,
              const storage::store_error& e, std::size_t size, const char* what,
              const std::string& ids) {
  setup.metrics->writer_errors++;
  if (e.code() == storage::store_errc::outcome_unknown) {
    // Not an outage line: the requesters must send these same requests
    // again, and the operator should know a COMMIT went unanswered.
    spdlog::warn("writer: group of {} {} may or may not have committed "
                 "({}): {}",
                 size, what, ids, e.what());
  } else if (e.code() == storage::store_errc::invalid_input) {
    spdlog::debug("writer: group of {} {} refused as invalid, not committed "
                  "({}): {}",
                  size, what, ids, e.what());
  } else {
    if (e.code() != storage::store_errc::busy)
      setup.metrics->writer_refusals.note("database", e.what(), setup.clock());
    auto level = database.failure_level(setup.clock());
    spdlog::log(level,
                "writer: database trouble, group of {} {} not committed "
                "({}): {}",
                size, what, ids, e.what());
  }
  return std::vector<batch_outcome<Receipt>>(
      size, batch_outcome<Receipt>{{}, writer_code_of(e), e.what()});
}

/// Commits what waits in `pending` as one group through `store`'s `write`
/// (its call for many); `answer` turns each result into its requester's
/// outcome. A group that fails answers each requester with the error,
/// `names` naming the group's requests in the log.
template <class Receipt, class Pending, class Write, class Answer, class Names>
std::vector<batch_outcome<Receipt>>
commit_writer_group(const writer_setup& setup, outage& database,
                    Pending& pending, storage::order_store& store, Write write,
                    Answer answer, const char* what, Names names) {
  auto requests = std::move(pending.requests);
  auto retries = std::move(pending.retry_of_unknown);
  pending.requests.clear();
  pending.retry_of_unknown.clear();
  if (requests.empty())
    return {};
  try {
    auto results = (store.*write)(requests, setup.clock());
    std::vector<batch_outcome<Receipt>> answers;
    answers.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i)
      answers.push_back(
          answer(*setup.metrics, results[i], requests[i], retries[i]));
    database.log_end(setup.clock, "writer", "", "database usable",
                     "groups not committed");
    return answers;
  } catch (const storage::store_error& e) {
    return not_committed<Receipt>(setup, database, e, requests.size(), what,
                                  names(requests));
  }
}

/// A ticket whose earlier attempt had an unknown outcome got an answer:
/// a replay says that attempt committed, a new write that it did not.
void count_resolved(metrics::run_metrics& m, bool retry_of_unknown,
                    bool replayed) {
  if (retry_of_unknown)
    (replayed ? m.unknown_found_committed : m.unknown_found_not_committed)++;
}

/// One order's outcome, counted.
order_outcome placed_outcome(metrics::run_metrics& metrics,
                             const storage::placed_order& r,
                             const storage::order_request& request,
                             bool retry_of_unknown) {
  using outcome = storage::placed_order::outcome;
  if (r.result == outcome::conflict) {
    metrics.orders_conflicted++;
    return {{}, ec::idempotency_conflict, request.request_id.value_or("")};
  }
  bool replayed = r.result == outcome::replayed;
  count_resolved(metrics, retry_of_unknown, replayed);
  // A replay of its own earlier attempt is an order this run placed.
  bool placed_here = !replayed || retry_of_unknown;
  (placed_here ? metrics.orders_placed : metrics.orders_replayed)++;
  return {order_receipt{r.order_id, r.event_id, r.aggregate_id, replayed,
                        replayed ? std::string{} : r.trace_id},
          ec::none,
          {}};
}

/// One follow-up's outcome, counted.
event_outcome appended_outcome(metrics::run_metrics& metrics,
                               const storage::appended_event& r,
                               const storage::event_request&,
                               bool retry_of_unknown) {
  count_resolved(metrics, retry_of_unknown, r.replayed);
  if (!r.replayed || retry_of_unknown)
    metrics.events_appended++;
  return {event_receipt{r.event_id, r.aggregate_id, r.seq, r.replayed},
          ec::none,
          {}};
}

/// A group's requests as its log line names them.
std::string order_group_names(const std::vector<storage::order_request>& rs) {
  return "requests: " + bounded_list(rs, [](const auto& r) {
           return r.request_id.value_or("(no request id)");
         });
}

std::string event_group_names(const std::vector<storage::event_request>& rs) {
  return "aggregates: " + bounded_list(rs, [](const auto& r) {
           return r.aggregate_id + " " + r.event_type;
         });
}

} // namespace

writer_core::writer_core(writer_setup setup,
                         std::unique_ptr<storage::order_store> store,
                         std::unique_ptr<storage::database> owner)
    : setup_(std::move(setup)), owner_(std::move(owner)),
      store_(std::move(store)) {}

admission writer_core::join_order(storage::order_request request,
                                  bool retry_of_unknown) {
  return join(orders_, std::move(request), retry_of_unknown);
}

admission writer_core::join_event(storage::event_request request,
                                  bool retry_of_unknown) {
  return join(events_, std::move(request), retry_of_unknown);
}

template <class Request>
admission writer_core::join(pending_group<Request>& pending, Request request,
                            bool retry_of_unknown) {
  if (auto problem = storage::validate(request))
    return {std::move(problem), {}};
  pending.requests.push_back(std::move(request));
  pending.retry_of_unknown.push_back(retry_of_unknown);
  return {std::nullopt, plan_commit()};
}

/// Commits now when the group is full, else makes sure a commit follows
/// within commit_delay_ms.
commit_plan writer_core::plan_commit() {
  auto size = static_cast<int>(orders_.size() + events_.size());
  if (size >= setup_.commit_batch)
    return {commit_plan::when::now, generation_, 0};
  if (commit_planned_)
    return {commit_plan::when::planned, generation_, 0};
  commit_planned_ = true;
  if (setup_.commit_delay_ms == 0)
    // Natural batching: the commit queues behind every request already in
    // the mailbox, so a busy writer commits big groups (requests pile up
    // during each fsync) and an idle one commits at once.
    return {commit_plan::when::after_mailbox, generation_, 0};
  return {commit_plan::when::after_delay, generation_, setup_.commit_delay_ms};
}

committed_group writer_core::commit() {
  ++generation_;
  commit_planned_ = false;
  committed_group answers;
  answers.orders = commit_writer_group<order_receipt>(
      setup_, database_, orders_, *store_, &storage::order_store::place_orders,
      placed_outcome, "orders", order_group_names);
  answers.events = commit_writer_group<event_receipt>(
      setup_, database_, events_, *store_, &storage::order_store::append_events,
      appended_outcome, "events", event_group_names);
  count_lost_commits();
  setup_.metrics->commits++;
  return answers;
}

/// Adds what the store found out about lost COMMITs since the last look.
void writer_core::count_lost_commits() {
  auto now = store_->lost_commit_outcomes();
  auto& m = *setup_.metrics;
  m.commits_unknown += now.lost - lost_counted_.lost;
  m.unknown_found_committed += now.committed - lost_counted_.committed;
  m.unknown_found_not_committed +=
      now.not_committed - lost_counted_.not_committed;
  lost_counted_ = now;
}

std::unique_ptr<writer_core> open_writer_core(writer_setup setup) {
  auto db = storage::connect(setup.db, storage::open_mode::migrated);
  auto store = db->orders();
  return std::make_unique<writer_core>(std::move(setup), std::move(store),
                                       std::move(db));
}

} // namespace outbox::actors
