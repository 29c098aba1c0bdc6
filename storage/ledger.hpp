#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::storage {

/// One outbox row as the conservation checks see it.
struct ledger_row {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  std::string status;
  /// For OrderPlaced: the order's sku and qty from the payload; else empty/0.
  std::string sku;
  std::int64_t qty = 0;
  /// When the row was acknowledged (ms since the epoch); 0 when it was not.
  std::int64_t published_at = 0;
};

/// An event a consumer applied, as its dedup record names it.
struct applied_event {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
};

/// Where an applied event stands in the outbox, for deciding whether its
/// dedup record may be trimmed.
struct publication {
  enum class state {
    /// The row is there: see status and published_at.
    present,
    /// The row was purged: its aggregate's remaining rows all have higher
    /// seqs, or none remain and aggregate_heads covers its seq.
    purged,
    /// No row, and nothing says a purge removed it (another database?).
    unknown,
  };
  state where = state::unknown;
  std::string status;
  /// 0 when not PUBLISHED.
  std::int64_t published_at = 0;
};

} // namespace outbox::storage
