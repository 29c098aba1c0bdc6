#pragma once

// What a stage that runs `outbox` processes of its own gives them (a config
// file) and reads back from outside (the entries they queued).

#include "bench/stages.hpp"
#include "broker/connection.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <string>

namespace outbox::bench {

/// The config file `name` in the bench's folder for processes run with
/// `--bench-keyspace` over `s`: the user's key names (the flag makes them
/// the bench's), the scratch database and the Redis password. Secrets, so
/// a file of mode 0600 in the bench's own 0700 folder, removed with it.
std::string write_process_config(stage_context& ctx, const config::settings& s,
                                 const std::string& name);

/// Entries in the queues `names` gives, every partition in one round trip.
std::int64_t queued_entries(broker::connection& conn,
                            const broker::keys& names);

} // namespace outbox::bench
