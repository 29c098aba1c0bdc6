#pragma once

// Effects of the user's own (consumer.effects_lua, docs/events.md "Effects
// in Redis"): a Lua chunk that returns a table of functions by event type.
// The inbox script calls an event's function inside its atomic call, after
// the dedup check; the check at a consumer's start (effects_check.hpp) loads
// the chunk with the same Lua, so both see the same errors.

#include <string>

namespace outbox::broker {

/// The name the built-in effects go by: consumer.effects_lua's default,
/// effects/orders.lua compiled into the inbox script (the demo's stock
/// reservation).
extern const char* const builtin_effects_name;

/// Lua source defining:
/// - `clean_text(s)`: true when `s` is UTF-8 text without control
///   characters, what names and the fields of a record must be;
/// - `lua_error_text(err)`: an error as text (a failed redis.call is
///   Redis's error text, or a table with `err`);
/// - `effects_store(prefix)`: what an effect reaches Redis through:
///   `store.key(name)` is `prefix .. name`; `store.call(command, key, ...)`
///   runs a command of one key under `prefix` (others raise an error naming
///   the effect's line), keeping in `store.failed` Redis's error of a call
///   that failed and in `store.calls` how many went through;
///   `store.is_text(s)` is clean_text;
/// - `effects_message(message, name)`: a message of the chunk's given the
///   file's name (`name:line: ...`, or `name: ...` without a line);
/// - `load_effects(source, name)`: a plain copy of the table the chunk
///   returns, or nil and why: a syntax error, an error at load, not a
///   table, a key that is not a string, a value that is not a function.
///   The chunk does not see `redis`, KEYS, ARGV, `_G` or
///   the loaders: effects go through `store`. It is code the operator
///   trusts, kept from mistakes, not a sandbox against malice;
/// - `builtin_effects`: the table effects/orders.lua returns, compiled
///   with the script (no load per call).
const std::string& lua_effects();

} // namespace outbox::broker
