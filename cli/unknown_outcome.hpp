#pragma once

// A write whose COMMIT answer was lost with the connection (PostgreSQL):
// the commands that write keep a key of the caller's (or make one), so the
// caller can send the same write again and learn what happened.

#include "storage/store_error.hpp"

#include <string>

namespace outbox::cli {

/// Runs `write`; a store_error outcome_unknown is thrown again with the
/// way out: "Run the same command with <flag> <key> to find out: it says
/// <done> if it was, and <once> if it was not". Answers what `write` does.
template <class Write>
auto naming_the_retry(Write write, const std::string& flag,
                      const std::string& key, const char* done,
                      const char* once) -> decltype(write()) {
  try {
    return write();
  } catch (const storage::store_error& e) {
    if (e.code() != storage::store_errc::outcome_unknown)
      throw;
    throw storage::store_error(
        e.code(), std::string{e.what()} + ". Run the same command with " +
                      flag + " " + key + " to find out: it says " + done +
                      " if it was, and " + once + " if it was not");
  }
}

} // namespace outbox::cli
