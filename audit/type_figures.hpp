#pragma once

// `outbox verify` per event type: every type, the demo's and a user's own,
// is counted from published to processed, so a type whose events stop
// being applied shows by its name, not only in the totals.

#include "storage/sqlite_fwd.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace outbox::audit {

struct type_figures {
  /// Its outbox rows PUBLISHED (those read for the audit).
  std::int64_t published = 0;
  /// Of those, how many the consumers recorded as processed.
  std::int64_t processed = 0;
};

/// Per event type, from the audit's tables (audit_tables.hpp): the ledger's
/// published rows and the processed records among them.
std::map<std::string, type_figures> figures_by_type(SQLite::Database& db);

} // namespace outbox::audit
