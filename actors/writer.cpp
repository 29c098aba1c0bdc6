#include "actors/writer.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

using writer_self = writer_actor::stateful_pointer<writer_state>;

storage::order_request order_request_of(std::string request_id, std::string sku,
                                        std::int64_t qty) {
  storage::order_request request;
  if (!request_id.empty())
    request.request_id = std::move(request_id);
  request.sku = std::move(sku);
  request.qty = qty;
  return request;
}

/// Hands each owed answer its outcome, in the order the requests joined.
template <class Receipt>
void answer_all(std::vector<reply_to<Receipt>>& owed,
                std::vector<batch_outcome<Receipt>> outcomes) {
  auto replies = std::move(owed);
  owed.clear();
  auto n = std::min(replies.size(), outcomes.size());
  for (std::size_t i = 0; i < n; ++i)
    replies[i].answer(std::move(outcomes[i]));
}

/// Commits the gathered group, answers its requesters and wakes relays.
void commit(writer_self self) {
  auto& st = self->state;
  auto answers = st.core->commit();
  answer_all(st.orders, std::move(answers.orders));
  answer_all(st.events, std::move(answers.events));
  for (const auto& relay : st.relays)
    self->send(relay, nudge_atom_v);
}

/// Carries out the core's plan for the group a request joined.
void follow_plan(writer_self self, const commit_plan& plan) {
  switch (plan.at) {
  case commit_plan::when::planned:
    break;
  case commit_plan::when::now:
    commit(self);
    break;
  case commit_plan::when::after_mailbox:
    self->send(self, commit_atom_v, plan.generation);
    break;
  case commit_plan::when::after_delay:
    self->delayed_send(self, std::chrono::milliseconds(plan.delay_ms),
                       commit_atom_v, plan.generation);
    break;
  }
}

/// A request the core refused is answered at once; one it took into the
/// group is owed its answer until the group commits.
template <class Receipt>
void owe(writer_self self, admission taken, reply_to<Receipt> reply,
         std::vector<reply_to<Receipt>>& owed) {
  if (taken.refusal) {
    reply.refuse(ec::invalid_input, std::move(*taken.refusal));
    return;
  }
  owed.push_back(std::move(reply));
  follow_plan(self, taken.plan);
}

void join_order(writer_self self, storage::order_request request,
                reply_to<order_receipt> reply, bool retry_of_unknown = false) {
  auto& st = self->state;
  owe(self, st.core->join_order(std::move(request), retry_of_unknown),
      std::move(reply), st.orders);
}

void join_event(writer_self self, storage::event_request request,
                reply_to<event_receipt> reply, bool retry_of_unknown = false) {
  auto& st = self->state;
  owe(self, st.core->join_event(std::move(request), retry_of_unknown),
      std::move(reply), st.events);
}

/// A batch's tickets join the groups one by one, exactly as as many single
/// requests would (a full group commits in the middle of a batch); its
/// answer waits for the last of them.
template <class Receipt, class Ticket, class Join>
caf::result<std::vector<batch_outcome<Receipt>>>
join_batch(writer_self self, std::vector<Ticket>& tickets, Join join) {
  using outcomes = std::vector<batch_outcome<Receipt>>;
  if (tickets.empty())
    return outcomes{};
  auto batch = std::make_shared<batch_reply<Receipt>>(
      self->make_response_promise(), tickets.size());
  for (std::size_t i = 0; i < tickets.size(); ++i)
    join(tickets[i], reply_to<Receipt>{batch, i});
  return caf::delegated<outcomes>{};
}

} // namespace

writer_actor::behavior_type
writer(writer_actor::stateful_pointer<writer_state> self, writer_setup setup) {
  try {
    self->state.core = open_writer_core(std::move(setup));
  } catch (const std::exception& e) {
    spdlog::error("writer: cannot start: {}", e.what());
    self->quit(caf::make_error(ec::store_failure, e.what()));
    return writer_actor::behavior_type::make_empty_behavior();
  }
  return {
      [self](place_atom, std::string& request_id, std::string& sku,
             std::int64_t qty) -> caf::result<order_receipt> {
        join_order(self,
                   order_request_of(std::move(request_id), std::move(sku), qty),
                   reply_to<order_receipt>{self->make_response_promise()});
        return caf::delegated<order_receipt>{};
      },
      [self](append_atom, std::string& aggregate_id, std::string& event_type,
             std::string& payload) -> caf::result<event_receipt> {
        join_event(self,
                   storage::event_request{std::move(aggregate_id),
                                          std::move(event_type),
                                          std::move(payload)},
                   reply_to<event_receipt>{self->make_response_promise()});
        return caf::delegated<event_receipt>{};
      },
      [self](place_batch_atom, std::vector<order_ticket>& tickets) {
        return join_batch<order_receipt>(
            self, tickets, [self](order_ticket& t, reply_to<order_receipt> r) {
              join_order(self,
                         order_request_of(std::move(t.request_id),
                                          std::move(t.sku), t.qty),
                         std::move(r), t.retry_of_unknown);
            });
      },
      [self](append_batch_atom, std::vector<event_ticket>& tickets) {
        return join_batch<event_receipt>(
            self, tickets, [self](event_ticket& t, reply_to<event_receipt> r) {
              join_event(self,
                         storage::event_request{
                             std::move(t.aggregate_id), std::move(t.event_type),
                             std::move(t.payload), std::move(t.event_id),
                             std::move(t.headers)},
                         std::move(r), t.retry_of_unknown);
            });
      },
      [self](commit_atom, std::uint64_t generation) {
        if (self->state.core->is_current(generation))
          commit(self);
      },
      [self](relays_atom, std::vector<relay_actor>& relays) {
        self->state.relays = std::move(relays);
      },
  };
}

} // namespace outbox::actors
