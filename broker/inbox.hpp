#pragma once

#include "broker/keys.hpp"
#include "broker/lua_script.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

class connection;

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
};

/// The consumer's inbox: one Lua script that deduplicates by event_id and
/// applies the effect atomically (HSETNX processed, then for OrderPlaced
/// HINCRBY inventory.reserved), tracks the last seq per aggregate, and keeps
/// counters. Loaded once with SCRIPT LOAD, run with EVALSHA (reloaded on
/// NOSCRIPT, e.g. after a Redis restart without persistence of scripts).
class inbox {
public:
  inbox(connection& conn, keys names);

  /// Applies one entry exactly as it came from the queue. Throws
  /// broker_error only for Redis problems, never for a bad entry.
  applied_entry apply(const std::string& entry);

  /// The script's source, for the benchmark's ceiling measurement.
  static const std::string& script();

private:
  connection& conn_;
  keys names_;
  lua_script script_;
};

} // namespace outbox::broker
