#pragma once

// Relays as they run on PostgreSQL in production: each in its own
// `outbox run --relays 1 --consumers 0` process, as several hosts would
// run them, timed and metered from outside.

#include "bench/stages.hpp"

namespace outbox::bench {

/// The relay stage on PostgreSQL: 1, 2 and 4 relay processes over a
/// prefilled outbox, with the cores each process, the server and Redis
/// kept busy.
void measure_relay_processes(stage_context& ctx);

} // namespace outbox::bench
