#include "audit/pipeline_audit.hpp"

#include "audit/audit_tables.hpp"
#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/sqlite/database.hpp"

#include <algorithm>
#include <optional>

namespace outbox::audit {

namespace {

bool has(const verdict& v, const char* name, check::state result) {
  return std::any_of(v.checks.begin(), v.checks.end(), [&](const check& c) {
    return c.name == name && c.result == result;
  });
}

/// How many times the queues and the inbox are read at most while an
/// event looks lost or the counts are not settled.
constexpr int max_reads = 5;

/// A read's verdict, and whether a recovery moved entries back to their
/// queues while it read.
struct read_result {
  verdict v;
  bool recovery_ran = false;
};

/// The queues and the inbox, read after the ledger, and the verdict.
read_result read_after(audit_tables& tables, broker::connection& redis,
                       const broker::keys& names) {
  tables.forget_all_but_ledger();
  auto recovered = broker::read_recovered(redis, names);
  auto queues = broker::read_stats(redis, names);
  auto inbox = broker::read_inbox(redis, names, tables);
  // The inbox's read of the queues and processing lists too: an entry
  // popped after one read of the lists and recovered to its queue before
  // the next is in none of them (broker/queued_events.cpp). Under a
  // recovering consumer (a sink or Redis outage makes one recover at each
  // retry) a whole batch once looked lost so.
  bool recovery_ran = broker::read_recovered(redis, names) != recovered;
  // Rows committed after the first read may already be processed: read
  // again, so only a processed event with no row at all is an orphan. The
  // heads are read with them: a purge that deleted an aggregate's last row
  // before that read had saved its head in the same transaction.
  if (tables.names_unknown_events())
    tables.copy_later_rows();
  return {evaluate(tables, inbox, queues), recovery_ran};
}

verdict audit_with(audit_tables& tables, broker::connection& redis,
                   const broker::keys& names) {
  tables.copy_ledger();
  auto read = read_after(tables, redis, names);
  // A row whose entry was applied just after its record was read looks
  // unprocessed for an instant; from there only a recovery moves it back,
  // so one more read finds it. While recoveries run, an entry can also be
  // missed in every list (above), or the counts are not settled and the
  // check skipped: read again, a few times. A loss is never excused by
  // recoveries, only read again: if the reads end on a skip, the last read
  // that found an event missing is the verdict.
  std::optional<verdict> last_loss;
  bool confirmed = false;
  for (int reads = 1; reads < max_reads; ++reads) {
    bool lost = has(read.v, "published_processed", check::state::failed);
    if (lost)
      last_loss = read.v;
    else if (!has(read.v, "published_processed", check::state::skipped))
      break;
    if (read.recovery_ran)
      confirmed = false;
    else if (lost && confirmed)
      break;
    else if (lost)
      confirmed = true;
    read = read_after(tables, redis, names);
  }
  if (last_loss && has(read.v, "published_processed", check::state::skipped))
    return *last_loss;
  return read.v;
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
