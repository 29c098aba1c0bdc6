#include "actors/relay_refusal.hpp"

#include "actors/relay_log.hpp"
#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <optional>
#include <string_view>

namespace outbox::actors {

std::vector<broker::event_entry> to_entries(const storage::claim& c,
                                            storage::millis now) {
  std::vector<broker::event_entry> entries;
  entries.reserve(c.events.size());
  for (const auto& e : c.events)
    entries.push_back({e.event_id, e.aggregate_id, e.seq, e.event_type,
                       e.payload, e.created_at, now, e.headers});
  return entries;
}

storage::claim claim_without(const storage::claim& c,
                             const std::set<std::string>& excluded) {
  storage::claim rest = c;
  rest.events.clear();
  for (const auto& e : c.events)
    if (excluded.count(e.event_id) == 0)
      rest.events.push_back(e);
  return rest;
}

namespace {

/// Refusals about the entries themselves (an entry over
/// broker.max_entry_bytes, a queue key of the wrong type): they charge an
/// attempt however many rows share them.
bool refuses_the_entry(const broker::broker_error& refusal) {
  return refusal.reason() == broker::refusal_reason::wrong_type ||
         refusal.reason() == broker::refusal_reason::entry_too_large;
}

/// Every row Redis was asked about was refused, with the same words, and
/// the words are not about an entry: whatever the text, that is the
/// server's state (a proxy's or a future Redis's error code we do not
/// know), not the rows' fault. One row alone cannot tell: it is charged.
bool uniform_refusal(const std::vector<broker::broker_error>& errors,
                     std::size_t published) {
  if (published > 0 || errors.size() < 2 || refuses_the_entry(errors.front()))
    return false;
  for (const auto& error : errors)
    if (std::string_view{error.what()} != errors.front().what())
      return false;
  return true;
}

/// Notes a refusal that is not the rows' fault in the run's refusal log and
/// throws it as rejected (not an outage: counted as one, it would keep a
/// bounded run from ever stalling), with Redis's words and address.
[[noreturn]] void refuse_the_batch(relay_context& relay,
                                   const broker::broker_error& refusal,
                                   const std::string& why) {
  relay.setup.metrics->refusals.note(refusal.where(), refusal.words(),
                                     relay.setup.clock());
  throw broker::broker_error(broker::broker_errc::rejected,
                             why + ": " + refusal.what(),
                             broker::server_state::none, refusal.where(),
                             refusal.words(), refusal.reason());
}

} // namespace

storage::claim isolate_refused(relay_context& relay, const storage::claim& c,
                               storage::millis now,
                               const broker::broker_error& first) {
  auto& metrics = *relay.setup.metrics;
  const std::string first_error = first.what();
  // An ACL or a proxy refusing the command: publishing row by row would
  // only be refused the same way, and charging a lone row would end it
  // FAILED for the ACL's sake.
  if (first.reason() == broker::refusal_reason::command_refused &&
      c.events.size() == 1)
    refuse_the_batch(relay, first, "Redis refuses the command");
  std::set<std::string> blocked;
  std::vector<storage::event_lease> refused;
  std::vector<storage::event_lease> held_back;
  std::string reason = first_error;
  std::optional<broker::broker_error> last_refusal;
  std::vector<broker::broker_error> errors;
  std::size_t published = 0;
  std::size_t uncharged = 0;
  if (c.events.size() == 1) {
    blocked.insert(c.events.front().aggregate_id);
    refused.push_back({c.events.front().event_id, c.events.front().epoch,
                       c.events.front().rowid});
  }
  for (const auto& e : c.events) {
    if (c.events.size() == 1)
      break;
    if (blocked.count(e.aggregate_id)) {
      held_back.push_back({e.event_id, e.epoch, e.rowid});
      continue;
    }
    storage::claim single = c;
    single.events = {e};
    try {
      relay.publisher->publish(to_entries(single, now));
      ++published;
    } catch (const broker::broker_error& err) {
      if (err.code() == broker::broker_errc::unavailable)
        throw;
      blocked.insert(e.aggregate_id);
      last_refusal = err;
      // The command refused for this row's key (an ACL covering some
      // partitions only): handed back uncharged, like the rows behind it.
      if (err.reason() == broker::refusal_reason::command_refused) {
        relay.setup.metrics->refusals.note(err.where(), err.words(),
                                           relay.setup.clock());
        held_back.push_back({e.event_id, e.epoch, e.rowid});
        ++uncharged;
        continue;
      }
      refused.push_back({e.event_id, e.epoch, e.rowid});
      reason = err.what();
      errors.push_back(err);
    }
  }
  if (published == 0 && refused.empty() && last_refusal)
    refuse_the_batch(relay, *last_refusal, "Redis refuses the command");
  if (uniform_refusal(errors, published))
    refuse_the_batch(relay, *last_refusal,
                     "Redis refused every row of the batch with the same "
                     "error, not about an entry");
  // Rows of a blocked aggregate that came before its refused row were
  // published above and must be acknowledged like the others: left out,
  // their lease would expire and each takeover would publish them again.
  std::set<std::string> unpublished;
  for (const auto* leases : {&refused, &held_back})
    for (const auto& lease : *leases)
      unpublished.insert(lease.event_id);
  auto pushed = claim_without(c, unpublished);
  storage::failure_result failed;
  try {
    failed = relay.store->fail(relay.setup.name, refused, reason,
                               relay.setup.clock(), relay.setup.lease);
    metrics.rows_failed += failed.failed;
    metrics.released += relay.store->release(relay.setup.name, held_back);
  } catch (const storage::store_error&) {
    // The database is away: ack what was pushed and hand the rest back
    // once it answers (a refused row is refused, and charged, again then).
    std::vector<storage::event_lease> back = refused;
    back.insert(back.end(), held_back.begin(), held_back.end());
    relay.unsettled = unsettled_batch{std::move(pushed), now, std::move(back)};
    throw;
  }
  // Redis answered (with a refusal): it is reachable.
  redis_answered(relay);
  std::vector<std::string> refused_ids;
  for (const auto& lease : refused)
    refused_ids.push_back(lease.event_id);
  // Rows that became FAILED get a line each; the refusal gets one more only
  // when it did something else too (backed off, held rows back behind a
  // refused row). Rows the command was refused for are the coordinator's
  // to name, once, if it lasts.
  if (failed.backed_off > 0 || held_back.size() > uncharged)
    spdlog::warn("relay {}: broker refused {} rows, {} backed off, {} now "
                 "FAILED, {} later rows of their aggregates held back "
                 "(events: {}): {}",
                 relay.setup.name, refused.size(), failed.backed_off,
                 failed.failed, held_back.size(),
                 describe_rows(rows_named(c, refused_ids)), reason);
  for (const auto& row : rows_named(c, failed.failed_event_ids))
    log_failed(relay.setup.name,
               {row.event_id, row.aggregate_id, row.seq, row.event_type,
                row.attempts, reason, row.headers});
  return pushed;
}

} // namespace outbox::actors
