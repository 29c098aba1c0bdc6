#pragma once

// The check a consumer process makes of its effects file
// (consumer.effects_lua) before it starts: read, then loaded by Redis's own
// Lua exactly as the inbox script loads it, so that a syntax error, a value
// that is not a function or an error at load stops the start, named with
// the file and line, instead of failing every batch.

#include "broker/broker_fwd.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::broker {

/// Why an effects file cannot be used; the message names the file (and
/// the line where Lua gives one).
class effects_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Most bytes an effects file may have: it travels with every inbox call.
inline constexpr std::size_t max_effects_bytes = 256 * 1024;

/// The text of the effects file at `path`. Throws effects_error naming the
/// path when it cannot be read, is over max_effects_bytes or is not UTF-8.
std::string read_effects_file(const std::string& path);

/// The event types `source` (the effects file `name`) gives an effect,
/// sorted. Throws effects_error when Redis's Lua refuses it,
/// broker_error when Redis cannot be asked.
std::vector<std::string> check_effects(connection& conn,
                                       const std::string& source,
                                       const std::string& name);

} // namespace outbox::broker
