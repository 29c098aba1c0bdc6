#pragma once

// The targets of docs/performance.md: what each compares, how its figure
// comes from a run's measurements, and the value wanted by default.

#include "bench/results.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace outbox::bench {

/// The names of the targets, in the order of the report.
const std::vector<std::string>& target_names();

/// Checks every target against `r`'s figures; `wanted` overrides default
/// values by name. `context` is the run's (see run_bench): a target that
/// does not apply to what was measured (the fsync-always latency on a
/// Redis that does not fsync each write) is recorded as not measured, with
/// the reason, instead of as missed.
void check_targets(results& r, const nlohmann::json& context,
                   const std::map<std::string, double>& wanted);

/// True when the Redis described by `context["redis_persistence"]` fsyncs
/// every write (appendonly yes, appendfsync always).
bool redis_fsyncs_every_write(const nlohmann::json& context);

} // namespace outbox::bench
