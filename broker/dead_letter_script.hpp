#pragma once

// What a replay and a drop share: each plans its edit of the dead-letter
// list from a read of it, and its script (dead_letter_replay.lua,
// dead_letter_drop.lua) applies the plan only while the list still holds
// what was read; else the edit is planned again from a new read.

#include "broker/connection.hpp"
#include "broker/lua_script.hpp"

#include <cstddef>
#include <string>

namespace outbox::broker {

/// How many times an edit is planned again after the list changed under it.
inline constexpr int max_dead_letter_attempts = 5;

/// The edit's script: the shared wrong_key_type check, then `body`
/// (lua_files::dead_letter_replay or lua_files::dead_letter_drop).
lua_script dead_letter_script(const char* body);

/// Whether the script edited all `records` it was given: false when it
/// answered that the list changed since it was read. Throws
/// broker_error(rejected) naming the `script` on any other answer.
bool dead_letter_script_done(const redisReply& r, std::size_t records,
                             const std::string& script);

/// Throws broker_error(rejected): the list changed under each of
/// max_dead_letter_attempts plans to `edit` ("replay") `records` records;
/// nothing was `edited` ("replayed").
[[noreturn]] void throw_dead_letters_kept_changing(const std::string& edit,
                                                   const std::string& edited,
                                                   std::size_t records);

} // namespace outbox::broker
