#pragma once

// A dead-letter replay pushes each entry back on the list of its aggregate
// under the partition count the running processes use
// (broker/partitions_record.hpp): another count would put it where no
// consumer reads, or beside its aggregate's events in flight elsewhere.
// Unlike a relay or consumer process, a replay records no count of its own.

#include "broker/broker_fwd.hpp"
#include "broker/partitions_record.hpp"

namespace outbox::broker {

struct keys;

/// How names.partitions stands against the count recorded in Redis, read
/// without recording ours: agreed() unless another count is recorded.
/// Throws broker_error like recorded_partitions.
partitions_agreement partitions_for_replay(connection& conn, const keys& names);

} // namespace outbox::broker
