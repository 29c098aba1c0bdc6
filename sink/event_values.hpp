#pragma once

// The values an effect's parameters take from an event (sink/sql_effects.hpp
// names them).

#include "sink/sink.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace outbox::sink {

/// The value of parameter `name` for `event`: a string, a number, a
/// boolean, JSON text (for :payload, :headers and a field that is an
/// object or an array), or null when the event lacks it.
nlohmann::json parameter_value(const sink_event& event,
                               const std::string& name);

} // namespace outbox::sink
