#pragma once

// The keyspace owner stamp: a hash under the pipeline's key prefix naming
// the database whose events the keys hold (its id and path). Two databases
// pointed at one keyspace would read each other's queues and dedup records
// as their own, and `outbox verify` would report the difference as loss;
// with the stamp a command names the owner instead.

#include "broker/broker_fwd.hpp"

#include <optional>
#include <string>

namespace outbox::broker {

/// Who the keyspace belongs to.
struct keyspace_owner {
  /// The database's id (storage/database_identity.hpp).
  std::string id;
  /// Its path when the stamp was written, for people: a copy or move of the
  /// file keeps the id and so the keyspace.
  std::string path;
};

/// The stamp at `key`; nothing when there is none. A stamp without an id
/// (a hash someone else wrote) throws broker_error(rejected) naming the
/// key. Throws broker_error.
std::optional<keyspace_owner> read_owner(connection& conn,
                                         const std::string& key);

/// Writes `ours` at `key` unless a stamp is there (HSETNX on the id, so two
/// first processes agree on one owner) and returns the stamp in force.
/// Throws broker_error.
keyspace_owner stamp_owner(connection& conn, const std::string& key,
                           const keyspace_owner& ours);

} // namespace outbox::broker
