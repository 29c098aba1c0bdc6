#pragma once

// `outbox dead-letters`: reading the dead-letter list and putting entries
// back on their queues once the cause is fixed (an effect that failed).

#include "broker/broker_fwd.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace outbox::broker {

/// Every record of the dead-letter list, oldest first, read in one LRANGE
/// so that indexes are those of one moment (consumers only append).
std::vector<dead_letter> read_dead_letters(connection& conn, const keys& names);

/// Which records to replay: those whose entry has one of `event_ids`
/// (every record of an id), or with `all` every replayable record.
struct replay_request {
  std::vector<std::string> event_ids;
  bool all = false;
};

/// An entry put back, and where.
struct replayed_entry {
  dead_letter letter;
  std::string queue;
};

/// A record left in the list, or a name that matched nothing.
struct replay_refusal {
  /// The event_id named, or the record's when it has one.
  std::string event_id;
  /// The record concerned; nothing for an unknown event_id.
  std::optional<std::size_t> index;
  std::string why;
};

struct replay_result {
  /// In dead-letter order.
  std::vector<replayed_entry> replayed;
  /// Named ids that cannot be replayed: unknown, or one of their records is
  /// not replayable. When there is any, nothing was replayed.
  std::vector<replay_refusal> refused;
  /// With `all`: the records that stay in the list, and why.
  std::vector<replay_refusal> skipped;
};

/// Puts the requested entries back at the head of their queues
/// (keys::queue_for their aggregate_id), in dead-letter order, and removes
/// their records, in one script call: no moment where an entry is in both
/// lists or in neither. Rings each queue's doorbell so an idle consumer
/// wakes. The entries then go through the inbox like any delivery (a
/// duplicate is absorbed). When a record vanished between the read and the
/// script (another replay, a hand-made LREM), the script changes nothing
/// and the request is planned again on a fresh read. Throws broker_error.
replay_result replay_dead_letters(connection& conn, const keys& names,
                                  const replay_request& request);

} // namespace outbox::broker
