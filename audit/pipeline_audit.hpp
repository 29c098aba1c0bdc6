#pragma once

#include "audit/conservation.hpp"
#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"
#include "storage/database.hpp"
#include "storage/sqlite_fwd.hpp"

namespace outbox::audit {

/// Reads the database and Redis in the order evaluate() needs, so the
/// checks hold even while other processes keep working: the ledger first,
/// then the queues, then the inbox; the ledger again only if the inbox
/// names events committed after the first read; the queues and the inbox
/// once more before a published row is reported unprocessed (an entry in
/// flight between queue and processing list). Throws store_error or
/// broker_error.
verdict audit_pipeline(SQLite::Database& db, broker::connection& redis,
                       const broker::keys& names);

/// The same on a database connect() opened. On SQLite the audit copies the
/// ledger into TEMP tables on the database's own connection (one snapshot,
/// SQL joins on disk rather than in memory); on another backend into a
/// private temporary SQLite file, from the backend's ledger_source.
verdict audit_pipeline(storage::database& db, broker::connection& redis,
                       const broker::keys& names);

} // namespace outbox::audit
