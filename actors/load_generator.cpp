#include "actors/load_generator.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int sku_count = 20;
constexpr auto request_timeout = seconds(60);
constexpr auto retry_delay = milliseconds(50);

void issue_next(load_actor* self);

/// One step of SplitMix64: a well-mixed 64-bit value from any input.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The level of a retried request's line: database trouble is the writer's
/// to report (once per outage), anything else is news here.
spdlog::level::level_enum retry_level(const caf::error& err) {
  bool store_trouble =
      has_code(err, ec::store_busy) || has_code(err, ec::store_failure);
  return store_trouble ? spdlog::level::debug : spdlog::level::warn;
}

void finish_order(load_actor* self) {
  auto& st = self->state;
  ++st.finished;
  if (st.finished == st.setup.orders)
    self->send(st.setup.report_to, done_atom_v);
  else if (st.setup.orders_per_second == 0)
    issue_next(self);
}

/// A paced load: every tick issues the orders due by now, as long as fewer
/// than max_in_flight are open (a writer that falls behind is not buried).
void pace(load_actor* self) {
  auto& st = self->state;
  auto elapsed = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - st.started)
                     .count();
  auto due = std::min<std::int64_t>(
      st.setup.orders,
      static_cast<std::int64_t>(elapsed * st.setup.orders_per_second) + 1);
  while (st.issued < due && st.issued - st.finished < st.setup.max_in_flight)
    issue_next(self);
  if (st.issued < st.setup.orders)
    self->delayed_send(self, milliseconds(1), pace_atom_v);
}

/// Appends the remaining follow-ups of one order, one after the other: each
/// is only sent once the previous one committed, like a real workflow.
void append_followups(load_actor* self, std::string aggregate_id,
                      std::int64_t order_id, int step) {
  static const char* types[] = {"OrderPaid", "OrderShipped"};
  if (step >= 2)
    return finish_order(self);
  nlohmann::json payload{{"order_id", order_id}};
  if (step == 0)
    payload["amount_cents"] = 100 * (order_id % 50 + 1);
  else
    payload["carrier"] = order_id % 2 ? "post" : "courier";
  self->request(self->state.setup.writer, request_timeout, append_atom_v,
                aggregate_id, std::string{types[step]}, payload.dump())
      .then(
          [self, aggregate_id, order_id, step](const event_receipt&) {
            append_followups(self, aggregate_id, order_id, step + 1);
          },
          [self, aggregate_id, order_id, step](caf::error& err) {
            // Not idempotent by key: a follow-up is retried only when the
            // writer said the transaction did not commit (store errors).
            spdlog::log(retry_level(err),
                        "load: follow-up not appended, retrying ({} {}): {}",
                        aggregate_id, types[step], to_string(err));
            self->delayed_send(self, retry_delay, append_atom_v, aggregate_id,
                               order_id, step);
          });
}

void place(load_actor* self, std::int64_t index) {
  auto& st = self->state;
  // Derived from the index, so a retry sends the same parameters. SplitMix64
  // rather than a seeded mt19937_64: seeding one per order costs more than
  // placing the order.
  auto draw = splitmix64(st.setup.seed ^ static_cast<std::uint64_t>(index));
  auto sku = "sku-" + std::to_string(draw % sku_count + 1);
  auto qty = static_cast<std::int64_t>((draw >> 32) % 5 + 1);
  auto request_id = st.setup.run_id + "-" + std::to_string(index);
  self->request(st.setup.writer, request_timeout, place_atom_v, request_id, sku,
                qty)
      .then(
          [self](const order_receipt& receipt) {
            auto& st = self->state;
            std::uniform_real_distribution<double> roll{0.0, 1.0};
            if (roll(st.random) < st.setup.followup_share)
              append_followups(self, receipt.aggregate_id, receipt.order_id, 0);
            else
              finish_order(self);
          },
          [self, index](caf::error& err) {
            spdlog::log(retry_level(err),
                        "load: order not placed, retrying (order #{}): {}",
                        index, to_string(err));
            self->delayed_send(self, retry_delay, place_atom_v, index);
          });
}

void issue_next(load_actor* self) {
  auto& st = self->state;
  if (st.issued < st.setup.orders)
    place(self, st.issued++);
}

} // namespace

caf::behavior load_generator(load_actor* self, load_setup setup) {
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
        for (int i = 0; i < st.setup.max_in_flight; ++i)
          issue_next(self);
      },
      [self](pace_atom) { pace(self); },
      // Retries scheduled by the error handlers above.
      [self](place_atom, std::int64_t index) { place(self, index); },
      [self](append_atom, const std::string& aggregate_id,
             std::int64_t order_id, int step) {
        append_followups(self, aggregate_id, order_id, step);
      },
  };
}

} // namespace outbox::actors
