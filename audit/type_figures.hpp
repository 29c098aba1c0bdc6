#pragma once

// `outbox verify` per event type: every type, the demo's and a user's own,
// is counted from published to processed, so a type whose events stop
// being applied shows by its name, not only in the totals.

#include "metrics/audit_verdict.hpp"
#include "storage/sqlite_fwd.hpp"

#include <map>
#include <string>

namespace outbox::audit {

/// One type's figures (metrics/audit_verdict.hpp, beside the verdict).
using type_figures = metrics::type_figures;

/// Per event type, from the audit's tables (audit_tables.hpp): the ledger's
/// published rows and the processed records among them.
std::map<std::string, type_figures> figures_by_type(SQLite::Database& db);

} // namespace outbox::audit
