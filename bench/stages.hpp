#pragma once

// The benchmark's stages. Each measures one part of the pipeline (or the raw
// primitives it is built from) on fresh data in the workspace and adds its
// figures to the results.

#include "bench/results.hpp"
#include "bench/scale.hpp"
#include "bench/workspace.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace outbox::bench {

/// What every stage gets.
struct stage_context {
  workspace& space;
  bench_scale scale;
  results& out;
  caf::actor_system& system;
  std::function<void(const std::string&)> progress;
  /// The outbox-bench program, for stages that start processes of it.
  std::string program;
};

void measure_ceilings(stage_context& ctx);
void measure_writer(stage_context& ctx);
void measure_relays(stage_context& ctx);
void measure_consumers(stage_context& ctx);
void measure_end_to_end(stage_context& ctx);
void measure_growth(stage_context& ctx);
void measure_trim(stage_context& ctx);
/// Only in a soak run (`--soak`), and alone.
void measure_soak(stage_context& ctx);

/// The name of the ceiling of the writer's orders stored `kind` ("txn":
/// one per transaction, "group": commit_batch per transaction) with `s`'s
/// durability: sqlite_order_<kind>_<synchronous>, or postgres_order_<kind>.
std::string order_ceiling(const workspace& space, const config::settings& s,
                          const std::string& kind);

/// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);

/// Waits (polling every millisecond) until `done` holds; throws
/// std::runtime_error naming `what` after `limit`.
void wait_until(const std::function<bool()>& done, std::chrono::seconds limit,
                const std::string& what);

} // namespace outbox::bench
