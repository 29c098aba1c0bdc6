#pragma once

#include "broker/server_state.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace outbox::broker {

/// Why a broker call failed.
enum class broker_errc {
  /// Redis cannot be reached, or the connection broke or timed out (the
  /// connection has been reset; the next call opens a fresh one), or it
  /// answered that it cannot serve anyone for now (state() says why: a
  /// replica, out of memory, loading...). Waiting ends it.
  unavailable,
  /// Redis answered with an error (wrong type, script error, OOM...).
  rejected,
  /// A consumer's pop or apply was refused because another process holds
  /// the consumers' lock (broker/consumer_lock.hpp): this process must stop
  /// consuming. Nothing was moved or applied by the refused call.
  fenced,
};

const char* to_string(broker_errc code);

/// What a refusal (broker_errc::rejected) was about, told once where the
/// reply is read, so that callers decide on it instead of searching the
/// error's text.
enum class refusal_reason {
  /// Any other error reply (a script's error, OOM command not allowed...),
  /// or none.
  other,
  /// A key holds another type than the command needs (WRONGTYPE, also as
  /// the scripts' wrong_key_type words it): the entry's queue is unusable.
  wrong_type,
  /// An entry over broker.max_entry_bytes, refused before it was sent.
  entry_too_large,
  /// The command itself, for this user or on this server: an ACL, a proxy
  /// (command_refusal.hpp). No row is to blame.
  command_refused,
};

/// The reason an error reply gives, from its text as Redis sent it.
refusal_reason refusal_reason_of(std::string_view error_reply);

class broker_error : public std::runtime_error {
public:
  broker_error(broker_errc code, const std::string& what,
               server_state state = server_state::none, std::string where = {},
               std::string words = {},
               refusal_reason reason = refusal_reason::other)
      : std::runtime_error(what), code_(code), state_(state),
        where_(std::move(where)), words_(std::move(words)), reason_(reason) {}

  broker_errc code() const noexcept { return code_; }
  /// For an error reply naming the server's state (unavailable): which.
  server_state state() const noexcept { return state_; }
  /// The Redis that answered ("HOST:PORT"), when known.
  const std::string& where() const noexcept { return where_; }
  /// For an error reply: Redis's own words ("NOPERM this user has no
  /// permissions to run the 'rpush' command"), empty otherwise.
  const std::string& words() const noexcept { return words_; }
  /// For a refusal: what it was about.
  refusal_reason reason() const noexcept { return reason_; }

private:
  broker_errc code_;
  server_state state_;
  std::string where_;
  std::string words_;
  refusal_reason reason_;
};

} // namespace outbox::broker
