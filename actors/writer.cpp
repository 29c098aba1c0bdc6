#include "actors/writer.hpp"

#include "actors/log_lines.hpp"
#include "actors/messages.hpp"
#include "storage/store_error.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

ec code_of(const storage::store_error& e) {
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

storage::order_request order_request_of(std::string request_id, std::string sku,
                                        std::int64_t qty) {
  storage::order_request request;
  if (!request_id.empty())
    request.request_id = std::move(request_id);
  request.sku = std::move(sku);
  request.qty = qty;
  return request;
}

/// What waits in `pending` (orders or follow-up events, each with its
/// promise), taken as one group, and the requests alone for the store.
template <class Pending>
auto take_group(std::vector<Pending>& pending) {
  auto group = std::move(pending);
  pending.clear();
  std::vector<decltype(Pending::request)> requests;
  requests.reserve(group.size());
  for (auto& p : group)
    requests.push_back(p.request);
  return std::make_pair(std::move(group), std::move(requests));
}

/// A group did not commit: counted, and every requester gets the error.
/// Database trouble is warned about once per outage (every retry of the
/// load generator fails alike until it ends); a request the store refused
/// as invalid is its requester's business.
template <class Pending>
void not_committed(writer_state& st, const storage::store_error& e,
                   std::vector<Pending>& group, const char* what,
                   const std::string& ids) {
  st.setup.metrics->writer_errors++;
  if (e.code() == storage::store_errc::outcome_unknown) {
    // Not an outage line: the requesters must send these same requests
    // again, and the operator should know a COMMIT went unanswered.
    spdlog::warn("writer: group of {} {} may or may not have committed "
                 "({}): {}",
                 group.size(), what, ids, e.what());
  } else if (e.code() == storage::store_errc::invalid_input) {
    spdlog::debug("writer: group of {} {} refused as invalid, not committed "
                  "({}): {}",
                  group.size(), what, ids, e.what());
  } else {
    if (e.code() != storage::store_errc::busy)
      st.setup.metrics->writer_refusals.note("database", e.what(),
                                             st.setup.clock());
    auto level = st.database.failure_level(st.setup.clock());
    spdlog::log(level,
                "writer: database trouble, group of {} {} not committed "
                "({}): {}",
                group.size(), what, ids, e.what());
  }
  for (auto& p : group)
    p.reply.refuse(code_of(e), e.what());
}

/// Adds what the store found out about lost COMMITs since the last look.
void count_lost_commits(writer_state& st) {
  auto now = st.store->lost_commit_outcomes();
  auto& m = *st.setup.metrics;
  m.commits_unknown += now.lost - st.lost_counted.lost;
  m.unknown_found_committed += now.committed - st.lost_counted.committed;
  m.unknown_found_not_committed +=
      now.not_committed - st.lost_counted.not_committed;
  st.lost_counted = now;
}

/// A ticket whose earlier attempt had an unknown outcome got an answer:
/// a replay says that attempt committed, a new write that it did not.
void count_resolved(metrics::run_metrics& m, bool retry_of_unknown,
                    bool replayed) {
  if (retry_of_unknown)
    (replayed ? m.unknown_found_committed : m.unknown_found_not_committed)++;
}

/// A group committed: ends an outage the writer saw, with one line.
void committed(writer_state& st) {
  st.database.log_end(st.setup.clock, "writer", "", "database usable",
                      "groups not committed");
}

void commit_orders(writer_actor* self) {
  auto& st = self->state;
  auto [group, requests] = take_group(st.orders);
  if (group.empty())
    return;
  auto& metrics = *st.setup.metrics;
  try {
    auto results = st.store->place_orders(requests, st.setup.clock());
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      using outcome = storage::placed_order::outcome;
      if (r.result == outcome::conflict) {
        metrics.orders_conflicted++;
        group[i].reply.refuse(ec::idempotency_conflict,
                              requests[i].request_id.value_or(""));
        continue;
      }
      bool replayed = r.result == outcome::replayed;
      count_resolved(metrics, group[i].retry_of_unknown, replayed);
      // A replay of its own earlier attempt is an order this run placed.
      bool placed_here = !replayed || group[i].retry_of_unknown;
      (placed_here ? metrics.orders_placed : metrics.orders_replayed)++;
      group[i].reply.deliver(
          order_receipt{r.order_id, r.event_id, r.aggregate_id, replayed,
                        replayed ? std::string{} : r.trace_id});
    }
    committed(st);
  } catch (const storage::store_error& e) {
    not_committed(st, e, group, "orders",
                  "requests: " + bounded_list(requests, [](const auto& r) {
                    return r.request_id.value_or("(no request id)");
                  }));
  }
}

void commit_events(writer_actor* self) {
  auto& st = self->state;
  auto [group, requests] = take_group(st.events);
  if (group.empty())
    return;
  try {
    auto results = st.store->append_events(requests, st.setup.clock());
    auto& metrics = *st.setup.metrics;
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      count_resolved(metrics, group[i].retry_of_unknown, r.replayed);
      if (!r.replayed || group[i].retry_of_unknown)
        metrics.events_appended++;
      group[i].reply.deliver(
          event_receipt{r.event_id, r.aggregate_id, r.seq, r.replayed});
    }
    committed(st);
  } catch (const storage::store_error& e) {
    not_committed(st, e, group, "events",
                  "aggregates: " + bounded_list(requests, [](const auto& r) {
                    return r.aggregate_id + " " + r.event_type;
                  }));
  }
}

/// Commits the gathered group (orders, then follow-ups) and wakes relays.
void commit(writer_actor* self) {
  auto& st = self->state;
  ++st.generation;
  st.commit_scheduled = false;
  commit_orders(self);
  commit_events(self);
  count_lost_commits(st);
  st.setup.metrics->commits++;
  for (const auto& relay : st.relays)
    self->send(relay, nudge_atom_v);
}

/// Commits now when the group is full, else makes sure a commit follows
/// within commit_delay_ms.
void gather(writer_actor* self) {
  auto& st = self->state;
  auto size = static_cast<int>(st.orders.size() + st.events.size());
  if (size >= st.setup.commit_batch) {
    commit(self);
  } else if (!st.commit_scheduled) {
    st.commit_scheduled = true;
    if (st.setup.commit_delay_ms == 0)
      // Natural batching: the commit queues behind every request already in
      // the mailbox, so a busy writer commits big groups (requests pile up
      // during each fsync) and an idle one commits at once.
      self->send(self, commit_atom_v, st.generation);
    else
      self->delayed_send(self,
                         std::chrono::milliseconds(st.setup.commit_delay_ms),
                         commit_atom_v, st.generation);
  }
}

/// Lets a valid request join the group, its answer going to `reply`. An
/// invalid one is answered at once and never joins a group, so it cannot
/// fail anyone else's transaction (a bad payload would fail them all).
template <class Request, class Receipt, class Pending>
void join(writer_actor* self, Request request, reply_to<Receipt> reply,
          std::vector<Pending>& pending, bool retry_of_unknown = false) {
  if (auto problem = storage::validate(request)) {
    reply.refuse(ec::invalid_input, *problem);
    return;
  }
  pending.push_back({std::move(request), std::move(reply), retry_of_unknown});
  gather(self);
}

/// A batch's tickets join the groups one by one, exactly as as many single
/// requests would (a full group commits in the middle of a batch); its
/// answer waits for the last of them.
template <class Receipt, class Ticket, class Pending, class ToRequest>
caf::result<std::vector<batch_outcome<Receipt>>>
join_batch(writer_actor* self, std::vector<Ticket>& tickets,
           std::vector<Pending>& pending, ToRequest to_request) {
  using outcomes = std::vector<batch_outcome<Receipt>>;
  if (tickets.empty())
    return outcomes{};
  auto batch = std::make_shared<batch_reply<Receipt>>(
      self->make_response_promise(), tickets.size());
  for (std::size_t i = 0; i < tickets.size(); ++i)
    join(self, to_request(tickets[i]), reply_to<Receipt>{batch, i}, pending,
         tickets[i].retry_of_unknown);
  return caf::delegated<outcomes>{};
}

} // namespace

caf::behavior writer(writer_actor* self, writer_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  try {
    st.db = storage::connect(st.setup.db, storage::open_mode::migrated);
    st.store = st.db->orders();
  } catch (const std::exception& e) {
    spdlog::error("writer: cannot start: {}", e.what());
    self->quit(caf::make_error(ec::store_failure, e.what()));
    return {};
  }
  return {
      [self](place_atom, std::string& request_id, std::string& sku,
             std::int64_t qty) -> caf::result<order_receipt> {
        join(self, order_request_of(std::move(request_id), std::move(sku), qty),
             reply_to<order_receipt>{self->make_response_promise()},
             self->state.orders);
        return caf::delegated<order_receipt>{};
      },
      [self](append_atom, std::string& aggregate_id, std::string& event_type,
             std::string& payload) -> caf::result<event_receipt> {
        join(self,
             storage::event_request{std::move(aggregate_id),
                                    std::move(event_type), std::move(payload)},
             reply_to<event_receipt>{self->make_response_promise()},
             self->state.events);
        return caf::delegated<event_receipt>{};
      },
      [self](place_batch_atom, std::vector<order_ticket>& tickets) {
        return join_batch<order_receipt>(
            self, tickets, self->state.orders, [](order_ticket& t) {
              return order_request_of(std::move(t.request_id), std::move(t.sku),
                                      t.qty);
            });
      },
      [self](append_batch_atom, std::vector<event_ticket>& tickets) {
        return join_batch<event_receipt>(
            self, tickets, self->state.events, [](event_ticket& t) {
              return storage::event_request{
                  std::move(t.aggregate_id), std::move(t.event_type),
                  std::move(t.payload), std::move(t.event_id),
                  std::move(t.headers)};
            });
      },
      [self](commit_atom, std::uint64_t gen) {
        if (gen == self->state.generation)
          commit(self);
      },
      [self](relays_atom, std::vector<caf::actor> relays) {
        self->state.relays = std::move(relays);
      },
  };
}

} // namespace outbox::actors
