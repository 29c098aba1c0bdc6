#include "audit/pipeline_audit.hpp"

#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/ledger.hpp"

#include <unordered_set>

namespace outbox::audit {

verdict audit_pipeline(SQLite::Database& db, broker::connection& redis,
                       const broker::keys& names) {
  auto ledger = storage::read_ledger(db);
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

} // namespace outbox::audit
