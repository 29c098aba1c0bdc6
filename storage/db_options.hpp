#pragma once

// Where the database is and how to open it: the config's "db" section,
// read by storage::connect (storage/database.hpp), the factory that picks
// the backend.

#include <string>

namespace outbox::storage {

/// Where the database lives unless the user names a file: the one path
/// whose missing folder the writing commands create (storage/db_folder.hpp).
inline constexpr const char* default_db_path = "var/outbox.db";

/// How to open the SQLite file.
struct db_options {
  std::string path = default_db_path;
  /// How long a writer waits for another connection's lock before failing.
  int busy_timeout_ms = 5000;
  /// PRAGMA synchronous: "FULL" (durable across power loss, the default),
  /// "NORMAL" (WAL: durable across process crashes, may lose the last
  /// commits on power loss) or "OFF" (benchmarks only).
  std::string synchronous = "FULL";
  /// PRAGMA synchronous of the relays' connections. NORMAL loses nothing
  /// that matters: a relay's commits (claims, acks) lost to a power cut
  /// only make rows publish again, which the inbox absorbs; and the WAL is
  /// a log, so the next FULL commit (an order) makes every earlier relay
  /// commit durable with it, never a later one without an earlier one.
  std::string relay_synchronous = "NORMAL";

  /// These options as a relay opens them (synchronous = relay_synchronous).
  db_options for_relay() const {
    auto relay = *this;
    relay.synchronous = relay_synchronous;
    return relay;
  }
};

} // namespace outbox::storage
