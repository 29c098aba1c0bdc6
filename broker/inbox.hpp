#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/fence.hpp"
#include "broker/inbox_options.hpp"
#include "broker/keys.hpp"
#include "broker/lua_script.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::broker {

/// What a consumer's own database (consumer.sink) did with the entries of
/// its event types in a batch, before the inbox records it.
struct sink_outcomes {
  /// Applied there, or found there already (their inbox rows): recorded.
  std::vector<std::string> done;
  /// Refused there (or by the consumer before), with why: set aside on the
  /// dead-letter list as an effect that failed.
  std::map<std::string, std::string> refused;
  /// Not sent there because classify found them duplicates: should one be
  /// new by now, the call fails with OUTBOX_SINK_AGAIN (taken again).
  std::vector<std::string> skipped;
};

/// One entry as classify() finds it.
struct classified_entry {
  /// Not a duplicate (a malformed entry is new too).
  bool fresh = true;
  /// As the inbox script reads them; "" for a malformed entry.
  std::string event_id;
  std::string event_type;
};

/// What applying one entry did.
struct applied_entry {
  enum class outcome {
    /// First delivery: dedup record written and effect applied, atomically.
    applied,
    /// The event_id was already in `processed`: nothing changed.
    duplicate,
    /// The entry was malformed: moved to the dead-letter list with `reason`.
    dead_lettered,
  };
  outcome result = outcome::applied;
  /// For dead_lettered: what was wrong.
  std::string reason;
  /// For applied: the entry came before a lower seq of its aggregate.
  bool order_violation = false;
  /// For applied and duplicate: the entry's committed_at (0 if it has none),
  /// so the consumer can measure latency without decoding the entry.
  std::int64_t committed_at = 0;
};

/// The consumer's inbox: one Lua script that deduplicates by event_id and
/// applies the event type's effect atomically (HSETNX processed, then the
/// effect: the built-in one reserves an OrderPlaced's stock in
/// effects:inventory.reserved), tracks the last seq per aggregate, and
/// keeps counters. Loaded once with SCRIPT LOAD, run with EVALSHA (reloaded on
/// NOSCRIPT, e.g. after a Redis restart without persistence of scripts).
class inbox {
public:
  /// With an active `fence`, every call first checks that this process
  /// still holds the consumers' lock, and throws broker_error(fenced)
  /// without applying anything when it does not.
  /// `options`: what becomes of event types it has no effect for.
  inbox(connection& conn, keys names, fence fenced_by = {},
        inbox_options options = {});

  /// Most entries and bytes one script call carries; apply_batch splits a
  /// longer batch into several calls. Keeps each EVALSHA well inside what
  /// Redis buffers comfortably for one command.
  static constexpr std::size_t max_call_entries = 512;
  static constexpr std::size_t max_call_bytes = 16u << 20;

  /// Applies one entry exactly as it came from the queue: apply_batch of
  /// one. Throws broker_error only for Redis problems, never for a bad entry.
  applied_entry apply(const std::string& entry);

  /// Applies entries in order, one script call (one round trip) per
  /// max_call_entries / max_call_bytes, with exactly the per-entry logic of
  /// apply(): a repeat within the batch is a duplicate, order is checked
  /// entry by entry. Returns one result per entry, in order. On a
  /// broker_error a prefix of the batch may have been applied (scripts are
  /// not rolled back): redelivered, it is absorbed as duplicates.
  ///
  /// `sink`: what the consumer's own database (consumer.sink) did with
  /// the batch's entries of its types (sink_outcomes).
  std::vector<applied_entry>
  apply_batch(const std::vector<std::string>& entries,
              const sink_outcomes& sink = {});

  /// For each entry, whether apply_batch would find it new (not a
  /// duplicate by its record or its aggregate's seq), without writing
  /// anything; a malformed entry counts as new (apply_batch dead-letters
  /// it). Fenced as apply_batch. What a consumer asks before it applies
  /// entries in its own database (adapters/sink_apply.cpp).
  std::vector<classified_entry>
  classify(const std::vector<std::string>& entries);

  /// The script's source, for the benchmark's ceiling measurement.
  static const std::string& script();

private:
  /// One script call for entries [first, last); appends to `results`.
  void apply_call(std::vector<std::string>::const_iterator first,
                  std::vector<std::string>::const_iterator last,
                  const std::string& argument,
                  std::vector<applied_entry>& results);

  /// One script call with `argument` for entries [first, last): the reply,
  /// an array of one element per entry.
  reply call(std::vector<std::string>::const_iterator first,
             std::vector<std::string>::const_iterator last,
             const std::string& argument);

  /// Calls `call(first, last)` for consecutive runs of `entries` within
  /// max_call_entries and max_call_bytes.
  template <class Call>
  static void in_calls(const std::vector<std::string>& entries, Call call);

  connection& conn_;
  keys names_;
  fence fence_;
  /// ARGV[1] of every call: the holder, with the options when not the
  /// defaults (inbox_script_options).
  std::string first_argument_;
  lua_script script_;
};

} // namespace outbox::broker
