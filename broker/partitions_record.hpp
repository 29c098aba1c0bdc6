#pragma once

// broker.partitions chooses the list of every aggregate (a hash modulo the
// count), so all processes that push or pop must agree on it: a relay with
// another count sends an aggregate's next event to another list, where
// another consumer may apply it before the earlier ones. The first relay or
// consumer process records its count in Redis; the others compare theirs
// with it before they start (cli/run_command.cpp).

#include <cstddef>
#include <optional>

namespace outbox::broker {

class connection;
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

} // namespace outbox::broker
