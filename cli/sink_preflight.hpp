#pragma once

// A consuming process's own database (consumer.sink and consumer.effects_sql,
// docs/events.md "Effects in your database"): the effects file parsed and every
// statement prepared in the sink before anything starts, so that a file or
// a sink that cannot be used stops the start naming why.

#include "adapters/sink_apply.hpp"
#include "broker/inbox_options.hpp"
#include "config/settings.hpp"

#include <optional>
#include <string>

namespace outbox::cli {

/// The sink of `s`'s consumers, when consumer.sink names one and the
/// process runs consumers; its event types go to `inbox.sink_types`.
/// Returns the exit code when the start must stop, the reason printed
/// after `who`: 2 for a setting, file or sink that cannot be used (no
/// effects_sql, a statement the sink refuses, no inbox table, a type the
/// Lua effects have too), 1 when the sink cannot be reached.
std::optional<int>
consumer_sink_settings(const config::settings& s, const std::string& who,
                       broker::inbox_options& inbox,
                       std::optional<adapters::consumer_sink>& out);

} // namespace outbox::cli
