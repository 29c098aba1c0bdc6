#include "bench/relay_processes.hpp"

#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/process_config.hpp"
#include "bench/process_cpu.hpp"
#include "bench/process_group.hpp"
#include "broker/connection.hpp"
#include "storage/postgres/session.hpp"
#include "text/plural.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

/// Where every meter stands at one moment.
struct reading {
  clock::time_point at;
  std::vector<double> relays;
  double server = 0;
  double redis = 0;
};

struct figures {
  double rate = 0;
  double relay_cores = 0;
  double server_cores = 0;
  double redis_cores = 0;
  double cpu_per_event_us = 0;
};

/// Runs `count` relay processes over the `events` PENDING rows of `s`
/// until every one is in Redis and PUBLISHED. So that several start
/// together, a lock on the outbox (SHARE) holds each process early in its
/// start-up, where it first prepares the statements that update the
/// outbox; the clock starts when the lock goes and stops at the last entry
/// in Redis. What each process does after the lock (its actors, its relay's
/// session: well under a second) is timed with the rest.
figures run_relays(stage_context& ctx, const config::settings& s, int count,
                   std::int64_t events) {
  auto postmaster = local_postmaster(s.db);
  broker::connection conn{s.redis};
  // Declared before the gate, so that on a failure the gate goes first and
  // the processes, no longer held, can take their SIGTERM.
  std::unique_ptr<process_group> relays;
  storage::postgres::session gate{s.db};
  gate.exec("bench", "BEGIN");
  gate.exec("bench", "LOCK TABLE outbox IN SHARE MODE");
  std::vector<std::vector<std::string>> args(
      static_cast<std::size_t>(count),
      pipeline_process_args(write_process_config(ctx, s, "relays.json"), "1",
                            "0"));
  relays = std::make_unique<process_group>(ctx.program, args,
                                           ctx.space.folder(), "relay");
  auto check = [&] {
    try {
      relays->check_running();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string{"relay stage: "} + e.what());
    }
  };
  auto deadline =
      clock::now() + std::chrono::seconds(ctx.scale.stage_timeout_s);
  // Every process waiting for the lock, or they go anyway after half
  // their lock_timeout (db.busy_timeout_ms; 0 waits for ever), so that none
  // gives up waiting.
  auto barrier =
      clock::now() + std::chrono::milliseconds(s.db.busy_timeout_ms > 0
                                                   ? s.db.busy_timeout_ms / 2
                                                   : 20'000);
  while (clock::now() < barrier &&
         gate.exec("bench", "SELECT count(*) FROM pg_locks WHERE relation = "
                            "'outbox'::regclass AND database = (SELECT oid "
                            "FROM pg_database WHERE datname = "
                            "current_database()) AND NOT granted")
                 .int64(0, 0) < count) {
    check();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto read = [&] {
    reading r;
    r.at = clock::now();
    r.relays = relays->cpu_seconds();
    r.server = postmaster ? server_cpu_seconds(*postmaster) : 0;
    r.redis = redis_cpu_seconds(s);
    return r;
  };
  auto first = read();
  gate.exec("bench", "COMMIT");
  while (queued_entries(conn, s.broker) < events) {
    check();
    if (clock::now() > deadline)
      throw std::runtime_error(
          "relay stage: gave up waiting for " +
          text::plural(count, "relay process", "relay processes") +
          " to publish every row");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto last = read();
  // Pushed first, acked right after: wait for the acks (not timed).
  for (;;) {
    check();
    auto left = gate.exec("bench", "SELECT count(*) FROM outbox WHERE "
                                   "published_at IS NULL")
                    .int64(0, 0);
    if (left == 0)
      break;
    if (clock::now() > deadline)
      throw std::runtime_error("relay stage: " + std::to_string(left) +
                               " rows still unpublished with every entry "
                               "in Redis");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (auto in_redis = queued_entries(conn, s.broker); in_redis != events)
    throw std::runtime_error("relay stage: " + std::to_string(events) +
                             " rows published but " + std::to_string(in_redis) +
                             " entries queued");
  auto seconds = std::chrono::duration<double>(last.at - first.at).count();
  double relay_cpu = 0;
  for (std::size_t i = 0; i < last.relays.size(); ++i)
    relay_cpu += last.relays[i] - first.relays.at(i);
  auto server_cpu = last.server - first.server;
  auto redis_cpu = last.redis - first.redis;
  figures f;
  f.rate = static_cast<double>(events) / seconds;
  f.relay_cores = relay_cpu / count / seconds;
  f.server_cores = server_cpu / seconds;
  f.redis_cores = redis_cpu / seconds;
  f.cpu_per_event_us =
      1e6 * (relay_cpu + server_cpu + redis_cpu) / static_cast<double>(events);
  return f;
}

} // namespace

void measure_relay_processes(stage_context& ctx) {
  if (ctx.program.empty())
    throw std::runtime_error("relay stage: relay processes need the outbox "
                             "program, and none was given");
  auto events = ctx.scale.relay_events;
  for (int count : {1, 2, 4}) {
    auto shape = text::plural(count, "relay process", "relay processes");
    ctx.progress("relay: " + shape);
    auto s = ctx.space.fresh("relay");
    // Two events per aggregate, as orders with a follow-up.
    fill_outbox(s.db, events, events / 2, storage::row_status::pending,
                "relay");
    auto f = run_relays(ctx, s, count, events);
    auto id = "relay_" + std::to_string(count);
    ctx.out.add({"relay", id,
                 shape + " (outbox run --relays 1 --consumers 0 each), "
                         "PENDING to PUBLISHED and in Redis",
                 f.rate, "events/s", "relay_serial"},
                count == 1 ? ""
                           : "the ceiling is one relay doing its database "
                             "work and then its publish; " +
                                 shape +
                                 " overlap one's publish with another's "
                                 "claim and ack");
    ctx.out.add({"relay", id + "_cores",
                 shape + ": cores busy per relay process", f.relay_cores,
                 "cores", ""});
    ctx.out.add({"relay", id + "_cores_postgres",
                 shape + ": cores busy in the PostgreSQL server (0: not on "
                         "this machine)",
                 f.server_cores, "cores", ""});
    ctx.out.add({"relay", id + "_cores_redis",
                 shape + ": cores busy in redis-server", f.redis_cores, "cores",
                 ""});
    if (count == 1)
      ctx.out.add({"relay", "relay_cpu",
                   "CPU per event, 1 relay process (outbox + PostgreSQL + "
                   "Redis)",
                   f.cpu_per_event_us, "us", ""});
  }
  ctx.space.clear_redis();
}

} // namespace outbox::bench
