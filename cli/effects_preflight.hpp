#pragma once

// A consuming process's effects (consumer.effects_lua, docs/events.md
// "Effects in Redis"): read and checked by Redis's Lua before anything starts,
// so that a file that cannot be used stops the start naming its line.

#include "broker/broker_fwd.hpp"
#include "broker/inbox_options.hpp"
#include "config/settings.hpp"

#include <optional>
#include <string>

namespace outbox::cli {

/// The inbox options of `s`'s consumers (consumer.unknown_types, and the
/// effects when consumer.effects_lua names a file and the process runs
/// consumers). Returns the exit code when the start must stop, the reason
/// printed after `who` (exit 2: the file cannot be read or Lua refuses it).
/// Throws broker_error when Redis cannot be asked.
std::optional<int> consumer_inbox_options(broker::connection& conn,
                                          const config::settings& s,
                                          const std::string& who,
                                          broker::inbox_options& out);

} // namespace outbox::cli
