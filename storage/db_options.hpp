#pragma once

// Where the database is and how to open it: the config's "db" section,
// read by storage::connect (storage/database.hpp), the factory that picks
// the backend.

#include <string>

namespace outbox::storage {

/// Where the database lives unless the user names a file: the one path
/// whose missing folder the writing commands create (storage/db_folder.hpp).
inline constexpr const char* default_db_path = "var/outbox.db";

/// How to open the database: a SQLite file, or PostgreSQL.
struct db_options {
  /// A SQLite file, or a PostgreSQL URI (postgresql://... or postgres://...,
  /// with libpq's parameters; its password never appears in messages).
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
  /// PostgreSQL only, never from the config: time the stores by the `now`
  /// their callers pass (the contract tests' manual clock) instead of the
  /// database's clock_timestamp(), which production uses so that leases
  /// and backoff follow one clock whatever host a relay runs on.
  bool caller_clock = false;

  /// True when `path` names a PostgreSQL database rather than a file.
  bool postgres() const {
    return path.rfind("postgresql://", 0) == 0 ||
           path.rfind("postgres://", 0) == 0;
  }

  /// The database as messages name it: the file, or the URI without its
  /// password (in the authority or as a parameter).
  std::string display_name() const;

  /// These options as a relay opens them (synchronous = relay_synchronous).
  db_options for_relay() const {
    auto relay = *this;
    relay.synchronous = relay_synchronous;
    return relay;
  }
};

} // namespace outbox::storage
