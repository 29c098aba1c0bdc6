#include "audit/pipeline_audit.hpp"

#include "audit/audit_tables.hpp"
#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/sqlite/database.hpp"

#include <algorithm>

namespace outbox::audit {

namespace {

bool failed(const verdict& v, const char* name) {
  return std::any_of(v.checks.begin(), v.checks.end(), [name](const check& c) {
    return c.name == name && c.result == check::state::failed;
  });
}

/// The queues and the inbox, read after the ledger, and the verdict.
verdict read_after(audit_tables& tables, broker::connection& redis,
                   const broker::keys& names) {
  tables.forget_all_but_ledger();
  auto queues = broker::read_stats(redis, names);
  auto inbox = broker::read_inbox(redis, names, tables);
  // Rows committed after the first read may already be processed: read
  // again, so only a processed event with no row at all is an orphan. The
  // heads are read with them: a purge that deleted an aggregate's last row
  // before that read had saved its head in the same transaction.
  if (tables.names_unknown_events())
    tables.copy_later_rows();
  return evaluate(tables, inbox, queues);
}

verdict audit_with(audit_tables& tables, broker::connection& redis,
                   const broker::keys& names) {
  tables.copy_ledger();
  auto v = read_after(tables, redis, names);
  // The queues are read before the processing lists are looked for, and a
  // read a recovery ran across is not settled (broker::read_stats), so an
  // entry in flight is counted; still, a row whose entry was applied just
  // after its record was read looks unprocessed for an instant. From there
  // nothing moves it back, so one more read finds it; a row still
  // unprocessed then is reported.
  if (failed(v, "published_processed"))
    v = read_after(tables, redis, names);
  return v;
}

} // namespace

verdict audit_pipeline(SQLite::Database& db, broker::connection& redis,
                       const broker::keys& names) {
  audit_tables tables{db};
  return audit_with(tables, redis, names);
}

verdict audit_pipeline(storage::database& db, broker::connection& redis,
                       const broker::keys& names) {
  if (auto source = db.ledger()) {
    audit_tables tables{*source};
    return audit_with(tables, redis, names);
  }
  return audit_pipeline(storage::sqlite::connection_of(db), redis, names);
}

} // namespace outbox::audit
