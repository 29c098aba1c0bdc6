#pragma once

// A consuming process's own database (consumer.sink and consumer.effects_sql,
// docs/events.md "Effects in your database"): the effects file parsed and every
// statement prepared in the sink before anything starts, so that a file or
// a sink that cannot be used stops the start naming why.

#include "broker/inbox_options.hpp"
#include "config/settings.hpp"
#include "sink/sink.hpp"
#include "startup/verdict.hpp"

#include <optional>

namespace outbox::startup {

/// The sink of `s`'s consumers, into `out`, when consumer.sink names one
/// and the process runs consumers; its event types go to
/// `inbox.sink_types`. Refuses refused_usage for a setting, file or sink
/// that cannot be used (no effects_sql, a statement the sink refuses, no
/// inbox table, a type the Lua effects have too), refused_failure when
/// the sink cannot be reached.
verdict consumer_sink_settings(const config::settings& s,
                               broker::inbox_options& inbox,
                               std::optional<sink::consumer_sink>& out);

} // namespace outbox::startup
