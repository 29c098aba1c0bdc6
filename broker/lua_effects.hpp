#pragma once

// Effects of the user's own (consumer.effects_lua, README "Effects in
// Redis"): a Lua chunk that returns a table of functions by event type.
// The inbox script calls an event's function inside its atomic call, after
// the dedup check; the check at a consumer's start (effects_check.hpp) loads
// the chunk with the same Lua, so both see the same errors.

#include <string>

namespace outbox::broker {

/// Lua source defining:
/// - `lua_error_text(err)`: an error as text (a failed redis.call is
///   Redis's error text, or a table with `err`);
/// - `effects_store(prefix)`: what an effect reaches Redis through:
///   `store.key(name)` is `prefix .. name`; `store.call(command, key, ...)`
///   runs a command of one key under `prefix` (others raise an error naming
///   the effect's line), keeping in `store.failed` Redis's error of a call
///   that failed and in `store.calls` how many went through;
/// - `effects_message(message, name)`: a message of the chunk's given the
///   file's name (`name:line: ...`, or `name: ...` without a line);
/// - `load_effects(source, name)`: a plain copy of the table the chunk
///   returns, or nil and why: a syntax error, an error at load, not a
///   table, a key that is not a string, a value that is not a function,
///   OrderPlaced (whose effect, the stock reservation, is the inbox
///   script's own). The chunk does not see `redis`, KEYS, ARGV, `_G` or
///   the loaders: effects go through `store`. It is code the operator
///   trusts, kept from mistakes, not a sandbox against malice.
const std::string& lua_effects();

} // namespace outbox::broker
