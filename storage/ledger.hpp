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

/// Receives the audit's snapshots of the outbox, a row or a head at a time
/// (audit/audit_tables.hpp keeps them in its scratch tables).
class ledger_sink {
public:
  virtual ~ledger_sink() = default;
  /// One outbox row: of the ledger, or `later` (committed after it).
  virtual void row(const ledger_row& row, bool later) = 0;
  /// One aggregate's last allocated seq (aggregate_heads).
  virtual void head(const std::string& aggregate_id, std::int64_t last_seq) = 0;
};

/// The audit's reads of a database it cannot join in place, each one
/// snapshot. Throws store_error.
class ledger_source {
public:
  virtual ~ledger_source() = default;
  /// Every outbox row, as the ledger.
  virtual void copy_ledger(ledger_sink& sink) = 0;
  /// The rows the ledger lacks (later) and the heads, in one snapshot: a
  /// purge that deleted an aggregate's last row is seen with its head.
  virtual void copy_later(ledger_sink& sink) = 0;
  /// Forgets what copy_later read, before it reads again.
  virtual void forget_later() = 0;
};

} // namespace outbox::storage
