#include "audit/conservation.hpp"
#include "storage/sqlite/sqlite_error.hpp"

#include "audit/audit_tables.hpp"
#include "audit/delivery_checks.hpp"
#include "audit/offenders.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <map>

namespace outbox::audit {

namespace {

/// No event applied twice: per aggregate, the records in `processed` plus
/// those `outbox trim` removed cannot outnumber its events (seqs run from 1
/// to the highest of its rows, or of its purged head). An event applied
/// again after its record was trimmed has two effects but one record, so
/// reserved_matches alone cannot see it; this count can.
check applied_once(SQLite::Database& db, const broker::inbox_snapshot& inbox) {
  if (!inbox.consistent)
    return {"applied_once", check::state::skipped,
            "consumers applied events while Redis was read"};
  // An aggregate without rows is no_orphan_effects' to report.
  SQLite::Statement query{
      db, "WITH applied AS ("
          "  SELECT aggregate_id, SUM(n) AS n FROM ("
          "    SELECT aggregate_id, n FROM temp.audit_trimmed"
          "    UNION ALL"
          "    SELECT aggregate_id, COUNT(*) FROM temp.audit_processed"
          "    WHERE aggregate_id IS NOT NULL GROUP BY aggregate_id)"
          "  GROUP BY aggregate_id),"
          " events AS ("
          "  SELECT aggregate_id, MAX(seq) AS n FROM ("
          "    SELECT aggregate_id, last_seq AS seq FROM temp.audit_heads"
          "    UNION ALL"
          "    SELECT aggregate_id, MAX(seq, 0) FROM temp.audit_ledger)"
          "  GROUP BY aggregate_id)"
          " SELECT a.aggregate_id, a.n, e.n, COALESCE(t.n, 0)"
          " FROM applied a JOIN events e ON e.aggregate_id = a.aggregate_id"
          " LEFT JOIN temp.audit_trimmed t ON t.aggregate_id = a.aggregate_id"
          " WHERE a.n > e.n ORDER BY a.aggregate_id"};
  auto twice = offenders_of(query, [](SQLite::Statement& row) {
    return row.getColumn(0).getString() + " applied " +
           std::to_string(row.getColumn(1).getInt64()) + " for " +
           std::to_string(row.getColumn(2).getInt64()) + " events (" +
           std::to_string(row.getColumn(3).getInt64()) + " of them trimmed)";
  });
  return make_check("applied_once", twice,
                    "aggregates with more applied events than events",
                    "no aggregate has more applied events than it has events");
}

/// The checks over the tables; `inbox` gives the per-sku hashes and the
/// figures Redis was read with.
verdict evaluate_tables(SQLite::Database& db, std::int64_t processed,
                        const broker::inbox_snapshot& inbox,
                        const broker::broker_stats& queues) {
  verdict v;
  v.processed = processed;
  v.queued = queues.queued_total();
  v.in_processing = queues.processing_total();
  v.dead_lettered = queues.dead_letter;
  v.order_violations = queues.counter("order_violations");
  {
    SQLite::Statement counts{
        db, "SELECT COUNT(*), COALESCE(SUM(status = 'PUBLISHED'), 0),"
            " COALESCE(SUM(status = 'FAILED'), 0)"
            " FROM temp.audit_ledger WHERE later = 0"};
    counts.executeStep();
    v.outbox_rows = counts.getColumn(0).getInt64();
    v.published = counts.getColumn(1).getInt64();
    v.failed_rows = counts.getColumn(2).getInt64();
    v.unpublished = v.outbox_rows - v.published - v.failed_rows;
  }
  v.by_type = figures_by_type(db);
  v.checks.push_back(published_processed(db, inbox, queues, v.published));
  v.checks.push_back(dead_letters(db, queues));
  v.checks.push_back(events_once(db));

  // Trimmed records took their effect with them into trimmed_reserved.
  std::map<std::string, std::int64_t> expected_reserved =
      inbox.trimmed_reserved;
  {
    SQLite::Statement placed{
        db, "SELECT l.sku, SUM(l.qty) FROM temp.audit_ledger l"
            " WHERE l.event_type = 'OrderPlaced' AND EXISTS (SELECT 1 FROM"
            "  temp.audit_processed p WHERE p.event_id = l.event_id"
            // A record the script wrote (it names its aggregate) of an
            // OrderPlaced without sku: no reservation was made in Redis (its
            // effect ran in the consumer's own database, consumer.sink, or
            // the consumers' effects are not the built-in ones).
            "  AND NOT (p.aggregate_id IS NOT NULL AND p.sku = ''))"
            " GROUP BY l.sku"};
    while (placed.executeStep())
      expected_reserved[placed.getColumn(0).getString()] +=
          placed.getColumn(1).getInt64();
  }

  // A processed event without a row is purged history, not an orphan, when
  // its aggregate's remaining rows all come after it (`outbox purge` deletes
  // a prefix of each aggregate's seqs, published in seq order), or none
  // remain and the head the purge saved covers it. Its effect still counts
  // in the reservations, taken from what the inbox recorded when it applied
  // it.
  SQLite::Statement unknown{
      db, "SELECT p.event_id, p.aggregate_id IS NOT NULL AND COALESCE("
          "  p.seq < (SELECT MIN(l.seq) FROM temp.audit_ledger l"
          "   WHERE l.aggregate_id = p.aggregate_id),"
          "  p.seq <= (SELECT h.last_seq FROM temp.audit_heads h"
          "   WHERE h.aggregate_id = p.aggregate_id), 0),"
          " p.event_type, p.sku, p.qty"
          " FROM temp.audit_processed p WHERE NOT EXISTS (SELECT 1 FROM"
          "  temp.audit_ledger l WHERE l.event_id = p.event_id)"
          " ORDER BY p.event_id"};
  offenders orphans;
  std::int64_t purged_history = 0;
  while (unknown.executeStep()) {
    if (unknown.getColumn(1).getInt() == 0) {
      orphans.add(unknown.getColumn(0).getString());
      continue;
    }
    ++purged_history;
    if (unknown.getColumn(2).getString() == "OrderPlaced" &&
        !unknown.getColumn(3).getString().empty())
      expected_reserved[unknown.getColumn(3).getString()] +=
          unknown.getColumn(4).getInt64();
  }
  auto all_known =
      std::to_string(v.processed) + " processed events all have an outbox row";
  if (purged_history > 0)
    all_known = std::to_string(v.processed - purged_history) +
                " processed events all have an outbox row; " +
                std::to_string(purged_history) +
                " more are of purged history (before their aggregate's "
                "remaining rows, or within a purged aggregate's head)";
  v.checks.push_back(make_check("no_orphan_effects", orphans,
                                "processed events without an outbox row",
                                all_known));

  v.checks.push_back(applied_once(db, inbox));

  if (!inbox.consistent) {
    v.checks.push_back({"reserved_matches", check::state::skipped,
                        "consumers applied events while Redis was read"});
  } else {
    offenders mismatched;
    for (const auto& finding : inbox.malformed)
      mismatched.add(finding);
    std::map<std::string, std::int64_t> all_skus = expected_reserved;
    for (const auto& [sku, qty] : inbox.reserved)
      all_skus.emplace(sku, 0);
    for (const auto& [sku, unused] : all_skus) {
      auto want = expected_reserved.count(sku) ? expected_reserved.at(sku) : 0;
      auto have = inbox.reserved.count(sku) ? inbox.reserved.at(sku) : 0;
      if (want != have)
        mismatched.add(sku + " reserved=" + std::to_string(have) +
                       " expected=" + std::to_string(want));
    }
    v.checks.push_back(make_check(
        "reserved_matches", mismatched, "skus with a wrong reservation",
        std::to_string(all_skus.size()) +
            " skus reserved exactly the processed orders' quantities" +
            (inbox.trimmed_records > 0
                 ? " (" + std::to_string(inbox.trimmed_records) +
                       " trimmed records counted from their summary)"
                 : std::string{})));
  }

  if (v.order_violations == 0)
    v.checks.push_back({"order_kept", check::state::passed,
                        "no aggregate's events were applied out of seq order"});
  else
    v.checks.push_back({"order_kept", check::state::failed,
                        std::to_string(v.order_violations) +
                            " events applied before a lower seq of their "
                            "aggregate"});
  return v;
}

} // namespace

verdict evaluate(audit_tables& tables, const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues) {
  try {
    tables.index_inbox_state();
    return evaluate_tables(tables.db(), tables.processed_count(), inbox,
                           queues);
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

verdict evaluate(const std::vector<storage::ledger_row>& ledger,
                 const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues,
                 const std::vector<storage::ledger_row>& later_rows,
                 const std::map<std::string, std::int64_t>& aggregate_heads) {
  SQLite::Database memory{":memory:",
                          SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE};
  audit_tables tables{memory};
  for (const auto& row : ledger)
    tables.add_row(row, false);
  for (const auto& row : later_rows)
    tables.add_row(row, true);
  for (const auto& [aggregate, last_seq] : aggregate_heads)
    tables.add_head(aggregate, last_seq);
  broker::hash_page records(inbox.processed.begin(), inbox.processed.end());
  tables.processed(records);
  for (const auto& [aggregate, n] : inbox.trimmed_by_aggregate)
    tables.trimmed(aggregate, n);
  for (const auto& [event_id, where] : inbox.waiting)
    tables.waiting(event_id, where);
  for (const auto& [aggregate, seq] : inbox.applied_seqs)
    tables.applied_seq(aggregate, seq);
  for (const auto& [field, mark] : inbox.gaps)
    tables.gap(field.first, field.second, mark);
  return evaluate(tables, inbox, queues);
}

} // namespace outbox::audit
