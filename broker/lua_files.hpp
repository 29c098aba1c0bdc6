#pragma once

// The Lua that Redis runs, one file a script in broker/lua/, compiled in
// verbatim (cmake/EmbedText.cmake): what Redis runs is the text a reader
// opens, with Lua's own highlighting and no C++ quoting around it. A script
// is its shared functions followed by its body (lua_source).

#include <initializer_list>
#include <string>

namespace outbox::broker {

namespace lua_files {

// Shared functions, put in front of the scripts that call them.

/// `wrong_key_type(expected)`: for a list of {key, type} pairs, an error
/// reply naming the first key that exists with another type, else nil.
/// Scripts are not rolled back on error, so they check before their first
/// write.
extern const char* const wrong_key_type;
/// `fence_refusal(lock, holder)`: nil when the call may go on (no holder
/// given, or the lock is `holder`'s), else the error reply to return before
/// any write (the lock is another's, or lapsed). Its reply starts with
/// fenced_error_prefix (fence.hpp).
extern const char* const fence_refusal;
/// `dead_letter_record(text, reason, max_kept)`: the record's JSON, with at
/// most `max_kept` bytes of `text` (cut on a UTF-8 character boundary) and
/// its real size. Every script that dead-letters writes its records with
/// it, so they all have one shape.
extern const char* const dead_letter_record;
/// The effects' functions (lua_effects.hpp says what each does).
extern const char* const load_effects;
/// `builtin_effects`: effects/orders.lua's table, compiled with the script
/// (lua_effects() puts the file's text in place of its marker line).
extern const char* const builtin_effects;
/// `note(hash, token, role, ttl)`: a consumer process's note beside the
/// consumers' lock.
extern const char* const consumer_lock_note;

// Script bodies, by the class that runs them.

/// inbox_script.hpp: the options and keys, each entry's checks and helpers,
/// the applying loop (one script in three files).
extern const char* const inbox_options;
extern const char* const inbox_entry;
extern const char* const inbox_apply;
/// effects_check.hpp: loads an effects file and lists its event types.
extern const char* const effects_check;
/// reliable_queue.hpp: takes a batch, removes the applied one, puts a
/// processing list back.
extern const char* const pop_batch;
extern const char* const remove_batch;
extern const char* const recover;
/// consumer_lock.hpp.
extern const char* const consumer_lock_acquire;
extern const char* const consumer_lock_renew;
extern const char* const consumer_lock_release;
/// publisher.hpp: one push to several lists, all or nothing.
extern const char* const push_lists;
/// relay_presence.hpp: a relay process's note.
extern const char* const relay_presence_note;
/// dead_letter_drop.hpp and dead_letters.hpp (replay).
extern const char* const dead_letter_drop;
extern const char* const dead_letter_replay;
/// inbox_trim.hpp: deletes old records, keeping their sums.
extern const char* const inbox_trim;
/// older_reservation.hpp: folds the reservation hash of before the
/// effects into the effects' one.
extern const char* const older_reservation_merge;

} // namespace lua_files

/// A script's source: `files` in order (shared functions first, the body
/// last), each after a newline.
std::string lua_source(std::initializer_list<const char*> files);

} // namespace outbox::broker
