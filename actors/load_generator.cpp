#include "actors/load_generator.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int sku_count = 20;
/// Orders, or follow-ups, handed to the writer in one message: a message's
/// own costs (the mailbox hop, the response, the request's timeout on the
/// runtime's clock) are paid once per batch instead of once per order.
constexpr std::int64_t tickets_per_message = 64;
constexpr auto request_timeout = seconds(60);
constexpr auto retry_delay = milliseconds(50);

/// Orders whose follow-ups are under way: their aggregates and order ids,
/// and the event ids of the step under way (empty until it starts).
struct followups {
  std::vector<std::string> aggregate_ids;
  std::vector<std::int64_t> order_ids;
  /// Of each order's OrderPlaced ("" when not known): its follow-ups are
  /// spans of that trace.
  std::vector<std::string> trace_ids;
  std::vector<std::string> event_ids;

  std::size_t size() const { return order_ids.size(); }
  void add(std::string aggregate_id, std::int64_t order_id,
           std::string trace_id) {
    aggregate_ids.push_back(std::move(aggregate_id));
    order_ids.push_back(order_id);
    trace_ids.push_back(std::move(trace_id));
  }
  /// Order i of `from`, with its event id when `same_step`.
  void add(const followups& from, std::size_t i, bool same_step) {
    add(from.aggregate_ids[i], from.order_ids[i], from.trace_ids[i]);
    if (same_step)
      event_ids.push_back(from.event_ids[i]);
  }
};

void refill(load_actor* self);

/// One step of SplitMix64: a well-mixed 64-bit value from any input.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The level of a retried request's line: database trouble is the writer's
/// to report (once per outage), anything else is news here.
spdlog::level::level_enum retry_level(ec code) {
  bool store_trouble = code == ec::store_busy || code == ec::store_failure ||
                       code == ec::store_outcome_unknown;
  return store_trouble ? spdlog::level::debug : spdlog::level::warn;
}

spdlog::level::level_enum retry_level(const caf::error& err) {
  return retry_level(has_code(err, ec::store_busy)      ? ec::store_busy
                     : has_code(err, ec::store_failure) ? ec::store_failure
                     : has_code(err, ec::store_outcome_unknown)
                         ? ec::store_outcome_unknown
                         : ec::none);
}

/// Whether ticket `i` may have been written although it was refused: its
/// next attempt is then a retry of an unknown outcome.
template <class Outcome>
bool outcome_unknown(const std::vector<Outcome>& outcomes, std::size_t i) {
  return i >= outcomes.size() || outcomes[i].error == ec::store_outcome_unknown;
}

/// Why ticket `i` of a batch was not taken, and the level of its retry's
/// line: the writer's refusal, or no outcome at all for it.
template <class Outcome>
std::pair<spdlog::level::level_enum, std::string>
refusal(const std::vector<Outcome>& outcomes, std::size_t i) {
  if (i >= outcomes.size())
    return {retry_level(ec::none), "no answer"};
  return {retry_level(outcomes[i].error),
          to_string(outcomes[i].error) + " " + outcomes[i].detail};
}

void finish_orders(load_actor* self, std::int64_t count) {
  auto& st = self->state;
  st.finished += count;
  if (st.finished == st.setup.orders)
    self->send(st.setup.report_to, done_atom_v);
  else if (st.setup.orders_per_second == 0)
    refill(self);
}

/// The order of index `index`. Derived from the index, so a retry sends the
/// same parameters. SplitMix64 rather than a seeded mt19937_64: seeding one
/// per order costs more than placing the order.
order_ticket ticket_of(const load_state& st, std::int64_t index) {
  auto draw = splitmix64(st.setup.seed ^ static_cast<std::uint64_t>(index));
  return {st.setup.run_id + "-" + std::to_string(index),
          "sku-" + std::to_string(draw % sku_count + 1),
          static_cast<std::int64_t>((draw >> 32) % 5 + 1),
          st.unknown_orders.count(index) > 0};
}

event_ticket followup_ticket(load_state& st, const std::string& aggregate_id,
                             std::int64_t order_id, const std::string& trace_id,
                             std::string event_id, int step) {
  static const char* types[] = {"OrderPaid", "OrderShipped"};
  nlohmann::json payload{{"order_id", order_id}};
  if (step == 0)
    payload["amount_cents"] = 100 * (order_id % 50 + 1);
  else
    payload["carrier"] = order_id % 2 ? "post" : "courier";
  bool retry_of_unknown = st.unknown_events.count(event_id) > 0;
  std::string headers;
  if (!trace_id.empty())
    headers =
        R"({"traceparent":")" + st.traces.child_traceparent(trace_id) + "\"}";
  return {aggregate_id,        types[step],      payload.dump(),
          std::move(event_id), retry_of_unknown, std::move(headers)};
}

/// Appends the next follow-up of each order, one step at a time: an
/// order's next follow-up is only sent once the previous one committed,
/// like a real workflow.
void append_followups(load_actor* self, followups orders, int step) {
  auto& st = self->state;
  if (step >= 2)
    return finish_orders(self, static_cast<std::int64_t>(orders.size()));
  while (orders.event_ids.size() < orders.size())
    orders.event_ids.push_back(st.event_ids.next());
  std::vector<event_ticket> tickets;
  tickets.reserve(orders.size());
  for (std::size_t i = 0; i < orders.size(); ++i)
    tickets.push_back(followup_ticket(st, orders.aggregate_ids[i],
                                      orders.order_ids[i], orders.trace_ids[i],
                                      orders.event_ids[i], step));
  // No timeout: the writer answers every ticket, committed or refused,
  // unless it dies (which ends the run).
  self->request(st.setup.writer, caf::infinite, append_batch_atom_v,
                std::move(tickets))
      .then(
          [self, orders, step](std::vector<event_outcome>& outcomes) {
            auto& st = self->state;
            followups next;
            followups again;
            std::size_t first_refused = 0;
            for (std::size_t i = 0; i < orders.size(); ++i) {
              bool ok = i < outcomes.size() && outcomes[i].ok();
              if (!ok && again.size() == 0)
                first_refused = i;
              if (ok)
                st.unknown_events.erase(orders.event_ids[i]);
              else if (outcome_unknown(outcomes, i))
                st.unknown_events.insert(orders.event_ids[i]);
              (ok ? next : again).add(orders, i, !ok);
            }
            if (again.size() > 0) {
              // Safe whether or not they committed: the retry carries the
              // same event ids, and one that exists is not appended again.
              auto [level, why] = refusal(outcomes, first_refused);
              spdlog::log(level,
                          "load: {} follow-ups not appended, retrying (first "
                          "{}): {}",
                          again.size(), again.aggregate_ids.front(), why);
              self->delayed_send(
                  self, retry_delay, append_atom_v,
                  std::move(again.aggregate_ids), std::move(again.order_ids),
                  std::move(again.trace_ids), std::move(again.event_ids), step);
            }
            if (next.size() > 0)
              append_followups(self, std::move(next), step + 1);
          },
          [self, orders](caf::error& err) {
            // The writer is gone (the run ends): whether they committed
            // is unknown, and nobody is left to ask; their orders end here.
            spdlog::error("load: {} follow-ups in an unknown state, not "
                          "retried (first {}): {}",
                          orders.size(), orders.aggregate_ids.front(),
                          to_string(err));
            finish_orders(self, static_cast<std::int64_t>(orders.size()));
          });
}

void place(load_actor* self, std::vector<std::int64_t> indexes) {
  auto& st = self->state;
  std::vector<order_ticket> tickets;
  tickets.reserve(indexes.size());
  for (auto index : indexes)
    tickets.push_back(ticket_of(st, index));
  self->request(st.setup.writer, request_timeout, place_batch_atom_v,
                std::move(tickets))
      .then(
          [self, indexes](std::vector<order_outcome>& outcomes) {
            auto& st = self->state;
            std::vector<std::int64_t> again;
            followups with_followups;
            std::int64_t done = 0;
            std::uniform_real_distribution<double> roll{0.0, 1.0};
            for (std::size_t i = 0; i < indexes.size(); ++i) {
              if (i >= outcomes.size() || !outcomes[i].ok()) {
                if (outcome_unknown(outcomes, i))
                  st.unknown_orders.insert(indexes[i]);
                // One line per batch: the first order refused, and why.
                if (again.empty()) {
                  auto [level, why] = refusal(outcomes, i);
                  spdlog::log(level,
                              "load: order #{} not placed, retrying it and "
                              "any other of its batch refused: {}",
                              indexes[i], why);
                }
                again.push_back(indexes[i]);
                continue;
              }
              st.unknown_orders.erase(indexes[i]);
              const auto& receipt = outcomes[i].receipt;
              if (roll(st.random) < st.setup.followup_share)
                with_followups.add(receipt.aggregate_id, receipt.order_id,
                                   receipt.trace_id);
              else
                ++done;
            }
            if (!again.empty())
              self->delayed_send(self, retry_delay, place_atom_v,
                                 std::move(again));
            if (with_followups.size() > 0)
              append_followups(self, std::move(with_followups), 0);
            if (done > 0)
              finish_orders(self, done);
          },
          [self, indexes](caf::error& err) {
            // Retried with the same request ids: an order that did commit
            // comes back replayed. Not marked unknown: after a timeout the
            // writer still holds the request and counts it placed when it
            // commits, so its replay must not count again.
            spdlog::log(retry_level(err),
                        "load: {} orders not placed, retrying (orders #{} "
                        "to #{}): {}",
                        indexes.size(), indexes.front(), indexes.back(),
                        to_string(err));
            self->delayed_send(self, retry_delay, place_atom_v, indexes);
          });
}

/// Issues up to `due` orders in all, in batches, as long as fewer than
/// max_in_flight are open (a writer that falls behind is not buried).
/// Orders finish a few at a time (those with follow-ups later), so a batch
/// waits until it can be full, or holds all that is due: sending whatever
/// room there is would split the batches smaller and smaller.
void issue_up_to(load_actor* self, std::int64_t due) {
  auto& st = self->state;
  auto full =
      std::min<std::int64_t>(tickets_per_message, st.setup.max_in_flight);
  for (;;) {
    auto room = st.setup.max_in_flight - (st.issued - st.finished);
    auto count = std::min({tickets_per_message, room, due - st.issued});
    if (count <= 0 || count < std::min(full, due - st.issued))
      return;
    std::vector<std::int64_t> indexes(static_cast<std::size_t>(count));
    for (auto& index : indexes)
      index = st.issued++;
    place(self, std::move(indexes));
  }
}

/// An unpaced load: keeps up to max_in_flight orders open, in whole batches
/// (with max_in_flight 100, one batch of 64: the rest waits for a second).
void refill(load_actor* self) {
  issue_up_to(self, self->state.setup.orders);
}

/// A paced load: every tick issues the orders due by now.
void pace(load_actor* self) {
  auto& st = self->state;
  auto elapsed = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - st.started)
                     .count();
  auto due = std::min<std::int64_t>(
      st.setup.orders,
      static_cast<std::int64_t>(elapsed * st.setup.orders_per_second) + 1);
  issue_up_to(self, due);
  if (st.issued < st.setup.orders)
    self->delayed_send(self, milliseconds(1), pace_atom_v);
}

} // namespace

load_generator_actor::behavior_type load_generator(load_actor* self,
                                                   load_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.random.seed(st.setup.seed);
  return {
      [self](start_atom) {
        auto& st = self->state;
        if (st.setup.orders == 0) {
          self->send(st.setup.report_to, done_atom_v);
          return;
        }
        if (st.setup.orders_per_second > 0) {
          st.started = std::chrono::steady_clock::now();
          pace(self);
          return;
        }
        refill(self);
      },
      [self](pace_atom) { pace(self); },
      // Retries scheduled by the handlers above.
      [self](place_atom, std::vector<std::int64_t>& indexes) {
        place(self, std::move(indexes));
      },
      [self](append_atom, std::vector<std::string>& aggregate_ids,
             std::vector<std::int64_t>& order_ids,
             std::vector<std::string>& trace_ids,
             std::vector<std::string>& event_ids, int step) {
        append_followups(self,
                         followups{std::move(aggregate_ids),
                                   std::move(order_ids), std::move(trace_ids),
                                   std::move(event_ids)},
                         step);
      },
  };
}

} // namespace outbox::actors
