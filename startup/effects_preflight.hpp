#pragma once

// A consuming process's effects (consumer.effects_lua, docs/events.md
// "Effects in Redis"): read and checked by Redis's Lua before anything starts,
// so that a file that cannot be used stops the start naming its line.

#include "broker/broker_fwd.hpp"
#include "broker/inbox_options.hpp"
#include "config/settings.hpp"
#include "startup/verdict.hpp"

namespace outbox::startup {

/// The inbox options of `s`'s consumers (consumer.unknown_types, and the
/// effects when consumer.effects_lua names a file and the process runs
/// consumers), into `out`. Refuses (refused_usage) when the file cannot be
/// read or Lua refuses it; says which effects run where, and warns when
/// they end the demo's reservation. An older outbox's reservation is
/// merged on the way. Throws broker_error when Redis cannot be asked.
verdict consumer_inbox_options(broker::connection& conn,
                               const config::settings& s,
                               broker::inbox_options& out);

} // namespace outbox::startup
