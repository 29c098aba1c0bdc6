#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"
#include "broker/lua_script.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::broker {

/// What one trim call did.
struct trim_result {
  /// Dedup records deleted (their OrderPlaced effect moved to
  /// keys::trimmed_reserved).
  std::int64_t trimmed = 0;
  /// Named records kept: applied at or after the cutoff, already gone, or
  /// not a record the inbox script wrote (nothing to account them by).
  std::int64_t kept = 0;
  /// Of `kept`, the named records already absent (trimmed by an earlier
  /// call: a scan may name a record twice).
  std::int64_t gone = 0;
};

/// Deletes old dedup records from `processed` without breaking the audit:
/// in one script call per batch, each record applied (its "at") before the
/// cutoff is deleted, its sku/qty is added to `trimmed_reserved`, and the
/// summary (`records`, `before` = the latest cutoff) and the count per
/// aggregate (keys::trimmed_aggregates) are updated. Records of an
/// aggregate whose gaps overflowed (see broker/lua/inbox_options.lua) are kept:
/// only they tell its duplicates. Deciding which records are safe to forget
/// (their event can no longer be delivered) is the caller's job: this only
/// refuses younger records.
class inbox_trim {
public:
  inbox_trim(connection& conn, keys names);

  /// Trims the named records applied before `cutoff_ms` (Redis TIME, ms).
  /// Throws broker_error(rejected) when a key has the wrong type.
  trim_result trim(std::int64_t cutoff_ms,
                   const std::vector<std::string>& event_ids);

private:
  connection& conn_;
  keys names_;
  lua_script script_;
};

} // namespace outbox::broker
