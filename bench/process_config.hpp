#pragma once

// What a stage that runs pipeline processes of its own gives them (their
// command line and config file) and reads back from outside (the entries
// they queued).

#include "bench/stages.hpp"
#include "broker/connection.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::bench {

/// The hidden command of outbox-bench that runs `outbox run`'s pipeline on
/// the bench's keys (bench/cli/pipeline_process_command.cpp): the program
/// the stages start, so that production `outbox run` knows nothing of the
/// bench.
inline constexpr const char* pipeline_process_command = "pipeline-process";

/// The arguments of such a process over the config file `config`, with
/// `relays` relays, `consumers` consumers and no load generator.
std::vector<std::string> pipeline_process_args(const std::string& config,
                                               const std::string& relays,
                                               const std::string& consumers);

/// The config file `name` in the bench's folder for pipeline processes
/// over `s`: the user's key names (the process makes them the bench's),
/// the scratch database and the Redis password. Secrets, so a file of
/// mode 0600 in the bench's own 0700 folder, removed with it.
std::string write_process_config(stage_context& ctx, const config::settings& s,
                                 const std::string& name);

/// Entries in the queues `names` gives, every partition in one round trip.
std::int64_t queued_entries(broker::connection& conn,
                            const broker::keys& names);

} // namespace outbox::bench
