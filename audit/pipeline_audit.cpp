#include "audit/pipeline_audit.hpp"

#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/ledger.hpp"

#include <algorithm>
#include <unordered_set>

namespace outbox::audit {

namespace {

bool failed(const verdict& v, const char* name) {
  return std::any_of(v.checks.begin(), v.checks.end(), [name](const check& c) {
    return c.name == name && c.result == check::state::failed;
  });
}

/// The queues and the inbox, read after `ledger`, and the verdict.
verdict read_after(SQLite::Database& db, broker::connection& redis,
                   const broker::keys& names,
                   const std::vector<storage::ledger_row>& ledger) {
  auto queues = broker::read_stats(redis, names);
  auto inbox = broker::read_inbox(redis, names);
  std::unordered_set<std::string> known;
  for (const auto& row : ledger)
    known.insert(row.event_id);
  bool unknown = false;
  for (const auto& [event_id, result] : inbox.processed)
    unknown = unknown || known.count(event_id) == 0;
  if (!unknown)
    return evaluate(ledger, inbox, queues);
  // Rows committed after the first read may already be processed: read
  // again, so only a processed event with no row at all is an orphan.
  std::vector<storage::ledger_row> later_rows;
  for (auto& row : storage::read_ledger(db))
    if (known.count(row.event_id) == 0)
      later_rows.push_back(std::move(row));
  // Read after the ledger: a purge that deleted an aggregate's last row
  // before that read had saved its head in the same transaction.
  return evaluate(ledger, inbox, queues, later_rows,
                  storage::read_aggregate_heads(db));
}

} // namespace

verdict audit_pipeline(SQLite::Database& db, broker::connection& redis,
                       const broker::keys& names) {
  auto ledger = storage::read_ledger(db);
  auto v = read_after(db, redis, names, ledger);
  // Processing lists are found by SCAN, then measured: an entry a consumer
  // moves from its queue into a list created between the two is seen in
  // neither for an instant, and its row looks unprocessed. From there it
  // only moves on to its record, so one more read finds it; a row still
  // unprocessed then is reported.
  if (failed(v, "published_processed"))
    v = read_after(db, redis, names, ledger);
  return v;
}

} // namespace outbox::audit
