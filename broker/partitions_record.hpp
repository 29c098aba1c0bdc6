#pragma once

// broker.partitions chooses the list of every aggregate (a hash modulo the
// count), so all processes that push or pop must agree on it: a relay with
// another count sends an aggregate's next event to another list, where
// another consumer may apply it before the earlier ones. The first relay or
// consumer process records its count in Redis; the others compare theirs
// with it before they start (cli/run_command.cpp).

#include "broker/broker_fwd.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace outbox::broker {

struct keys;

/// Records names.partitions under names.partitions_record() unless a count
/// is recorded already (SET NX, so concurrent first processes agree on one)
/// and returns the count recorded now: ours when we were first. Throws
/// broker_error: unavailable, or rejected for a record that is not a count.
std::size_t record_partitions(connection& conn, const keys& names);

/// The recorded count; nothing when none is recorded. Throws broker_error
/// like record_partitions.
std::optional<std::size_t> recorded_partitions(connection& conn,
                                               const keys& names);

/// How this process's count stands against the one every process shares.
struct partitions_agreement {
  /// names.partitions (at least 1).
  std::size_t ours = 1;
  /// The count recorded: ours when this process was first. Nothing when
  /// Redis takes no write now (a replica after a failover, a full Redis)
  /// and none could be read either: a later start records it.
  std::optional<std::size_t> recorded;
  /// Why ours could not be recorded, when it could not.
  std::string unrecorded;

  /// False only when a count other than ours is recorded.
  bool agreed() const { return !recorded || *recorded == ours; }
};

/// Records ours (record_partitions) or, when Redis takes no write, reads
/// the count recorded: a run must still start then (its writer needs no
/// Redis) and wait for writes, compared with what is recorded if anything.
/// Throws broker_error(rejected); an unavailable Redis throws nothing here
/// (`recorded` stays empty when it cannot even be read).
partitions_agreement agree_on_partitions(connection& conn, const keys& names);

} // namespace outbox::broker
