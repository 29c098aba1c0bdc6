// Writer: the writer actor fed by the load generator, one transaction per
// order against group commit, at synchronous FULL and NORMAL.

#include "actors/load_generator.hpp"
#include "actors/messages.hpp"
#include "actors/writer.hpp"
#include "bench/actor_group.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/stages.hpp"
#include "storage/types.hpp"

#include <caf/all.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::bench {

namespace {

/// Places `orders` orders (no follow-ups) through a writer committing
/// `commit_batch` requests per transaction. Returns orders per second.
double writer_rate(stage_context& ctx, const config::settings& s,
                   std::int64_t orders, int commit_batch) {
  auto metrics = std::make_shared<metrics::run_metrics>();
  actors::writer_setup ws{s.db, commit_batch, s.run.commit_delay_ms,
                          storage::wall_clock_now, metrics};
  actor_group running{ctx.system};
  auto writer = ctx.system.spawn<caf::detached>(actors::writer, ws);
  running.add(caf::actor_cast<caf::actor>(writer));
  auto& self = running.self();
  actors::load_setup ls;
  ls.orders = orders;
  ls.followup_share = 0;
  ls.max_in_flight = s.run.max_in_flight;
  ls.run_id = "bench";
  ls.writer = writer;
  // The stage stands in for the coordinator: it waits for done_atom.
  ls.report_to = caf::actor_cast<actors::load_listener_actor>(caf::actor{self});
  ls.metrics = metrics;
  auto load = ctx.system.spawn(actors::load_generator, ls);
  running.add(caf::actor_cast<caf::actor>(load));
  auto start = std::chrono::steady_clock::now();
  self->send(load, actors::start_atom_v);
  bool done = false;
  self->receive([&](actors::done_atom) { done = true; },
                caf::after(std::chrono::seconds(ctx.scale.stage_timeout_s)) >>
                    [] {});
  auto seconds = seconds_since(start);
  running.stop();
  if (!done || metrics->orders_placed < orders)
    throw std::runtime_error("writer stage: the load did not finish");
  return static_cast<double>(orders) / seconds;
}

} // namespace

void measure_writer(stage_context& ctx) {
  auto group = ctx.space.base().run.commit_batch;
  // PostgreSQL commits orders synchronously whatever db.synchronous says.
  auto durabilities = ctx.space.postgres()
                          ? std::vector<std::string>{"FULL"}
                          : std::vector<std::string>{"FULL", "NORMAL"};
  for (const auto& sync : durabilities) {
    auto s = ctx.space.fresh("writer", sync);
    auto durability = ctx.space.durability(s);
    auto shown = ctx.space.postgres() ? "PostgreSQL" : sync;
    ctx.progress("writer: " + (ctx.space.postgres() ? std::string{"PostgreSQL"}
                                                    : "synchronous " + sync));
    ctx.out.add({"writer", "writer_one_per_txn_" + durability,
                 "writer actor, one transaction per order, " + shown,
                 writer_rate(ctx, s, ctx.scale.orders_one_per_txn, 1),
                 "orders/s", order_ceiling(ctx.space, s, "txn")},
                "both wait for one fsync per order, and this disk's fsync "
                "time varies from one second to the next: the two can "
                "swap places");
    s = ctx.space.fresh("writer", sync);
    cpu_meter cpu{s};
    ctx.out.add({"writer", "writer_group_" + durability,
                 "writer actor, group commit (up to " + std::to_string(group) +
                     "), " + shown,
                 writer_rate(ctx, s, ctx.scale.orders_grouped, group),
                 "orders/s", order_ceiling(ctx.space, s, "group")});
    ctx.out.add({"writer", "writer_cpu_" + durability,
                 std::string{"CPU per order, group commit, "} + shown +
                     (ctx.space.postgres() ? " (outbox + server)" : ""),
                 1e6 * (cpu.own_seconds() + cpu.database_seconds()) /
                     static_cast<double>(ctx.scale.orders_grouped),
                 "us", ""});
  }
}

} // namespace outbox::bench
