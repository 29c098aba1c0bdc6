#pragma once

// Before a command reads or writes the pipeline's Redis keys: are they this
// database's? The keyspace owner stamp (broker/keyspace_owner.hpp) says
// whose they are; a command pointed at another database's keyspace names
// that database and stops, rather than reading its queues and dedup
// records as its own (verify would call the difference loss).

#include "config/settings.hpp"
#include "startup/verdict.hpp"
#include "storage/database.hpp"

namespace outbox::startup {

/// What the command does with the pipeline's keys.
enum class keyspace_use {
  /// Reads them (status, verify, dead-letters list): checks the stamp.
  read,
  /// Writes them (run, trim, dead-letters replay): checks the stamp and
  /// writes this database's when there is none.
  write,
};

/// Checks the stamp under broker.key_prefix against `db`'s identity.
/// Refuses (refused_usage) when the stamp names another database, or when
/// an upgraded database's events wait under the old, unprefixed names and
/// nothing is stamped under the prefix yet. A Redis that cannot be read is
/// left to the command, which reports it in its own way.
verdict check_keyspace(storage::database& db, const config::settings& s,
                       keyspace_use use = keyspace_use::read);

/// For `outbox lab`, which deletes the seed's key names before it starts:
/// refuses (refused_usage) when a pipeline stamped those names as its
/// keyspace (broker.key_prefix ""), which the lab's reset would delete.
verdict check_lab_keyspace(const config::settings& s);

} // namespace outbox::startup
