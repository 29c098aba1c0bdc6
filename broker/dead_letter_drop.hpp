#pragma once

// `outbox dead-letters drop`: an operator's decision that dead-lettered
// events will not be applied. Their records leave the dead-letter list and
// the decision is kept in keys::dead_letter_dropped, so `outbox verify` can
// tell an event given up on purpose from one lost.

#include "broker/broker_fwd.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace outbox::broker {

/// Which records to drop and why.
struct drop_request {
  /// Every record whose entry has one of these event_ids.
  std::vector<std::string> event_ids;
  /// Also every record without a readable event_id (a malformed record, or
  /// the record of an entry without one): such records cannot be named.
  bool malformed = false;
  /// The operator's words, kept with each decision; may be empty.
  std::string reason;
};

/// One decision: the field of keys::dead_letter_dropped it is kept under,
/// and the records it removes from the list.
struct drop_decision {
  /// The event_id, or "malformed:<sha1 of the record>" for a record
  /// without one (identical such records share it).
  std::string field;
  /// In dead-letter order; the first is kept as the evidence.
  std::vector<dead_letter> records;
};

/// What a drop picks from one reading of the list.
struct drop_plan {
  /// In the order of their first record in the list.
  std::vector<drop_decision> decisions;
  /// Named ids no record has. When there is any, nothing is dropped (the
  /// decisions are empty).
  std::vector<std::string> unknown;
  /// How many records the decisions remove.
  std::size_t records() const;
};

/// The bytes of a record kept as evidence in a decision (its start, cut on
/// a UTF-8 character boundary): a record holds up to 64 KiB of entry, and
/// the decisions are kept for good.
constexpr std::size_t max_evidence_bytes = 4096;

/// The field a record without a readable event_id is kept under.
std::string malformed_field(const std::string& record);

/// Picks the records `request` names from `letters` (one reading of the
/// list). Pure: no Redis.
drop_plan plan_drop(const std::vector<dead_letter>& letters,
                    const drop_request& request);

/// Runs `plan` as one script: checks every planned record is still in the
/// list, removes them and writes each decision (with Redis's TIME), or
/// changes nothing and returns false when a record is gone since the list
/// was read (a replay or drop by someone else, a hand-made LREM). Throws
/// broker_error, e.g. for a key of the wrong type (nothing changed).
bool apply_drop(connection& conn, const keys& names, const drop_plan& plan,
                const std::string& reason);

/// Reads the list, plans `request` and applies it, planning again on a
/// fresh read when the list changed under it (a few times, then
/// broker_error: nothing dropped). Records that arrive after it (another
/// copy of a dropped event) are listed again and need another drop.
drop_plan drop_dead_letters(connection& conn, const keys& names,
                            const drop_request& request);

} // namespace outbox::broker
