#include "storage/ledger.hpp"

#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace outbox::storage {

std::vector<ledger_row> read_ledger(SQLite::Database& db) {
  try {
    // A read transaction gives one consistent snapshot in WAL mode.
    SQLite::Transaction snapshot{db, SQLite::TransactionBehavior::DEFERRED};
    SQLite::Statement query{
        db, "SELECT event_id, aggregate_id, seq, event_type, status,"
            " CASE WHEN event_type='OrderPlaced'"
            "  THEN json_extract(payload, '$.sku') END,"
            " CASE WHEN event_type='OrderPlaced'"
            "  THEN json_extract(payload, '$.qty') END,"
            " published_at"
            " FROM outbox ORDER BY rowid"};
    std::vector<ledger_row> rows;
    while (query.executeStep()) {
      ledger_row row;
      row.event_id = query.getColumn(0).getString();
      row.aggregate_id = query.getColumn(1).getString();
      row.seq = query.getColumn(2).getInt64();
      row.event_type = query.getColumn(3).getString();
      row.status = query.getColumn(4).getString();
      if (!query.getColumn(5).isNull())
        row.sku = query.getColumn(5).getString();
      if (!query.getColumn(6).isNull())
        row.qty = query.getColumn(6).getInt64();
      if (!query.getColumn(7).isNull())
        row.published_at = query.getColumn(7).getInt64();
      rows.push_back(std::move(row));
    }
    snapshot.commit();
    return rows;
  } catch (...) {
    rethrow_as_store_error("read_ledger");
  }
}

std::map<std::string, std::int64_t> read_aggregate_heads(SQLite::Database& db) {
  try {
    SQLite::Statement query{
        db, "SELECT aggregate_id, last_seq FROM aggregate_heads"};
    std::map<std::string, std::int64_t> heads;
    while (query.executeStep())
      heads.emplace(query.getColumn(0).getString(),
                    query.getColumn(1).getInt64());
    return heads;
  } catch (...) {
    rethrow_as_store_error("read_aggregate_heads");
  }
}

std::vector<publication>
read_publications(SQLite::Database& db,
                  const std::vector<applied_event>& events) {
  std::vector<publication> found;
  if (events.empty())
    return found;
  try {
    SQLite::Transaction snapshot{db, SQLite::TransactionBehavior::DEFERRED};
    SQLite::Statement row{
        db, "SELECT status, published_at FROM outbox WHERE event_id = ?"};
    SQLite::Statement lowest{
        db, "SELECT MIN(seq) FROM outbox WHERE aggregate_id = ?"};
    SQLite::Statement head{
        db, "SELECT last_seq FROM aggregate_heads WHERE aggregate_id = ?"};
    found.reserve(events.size());
    for (const auto& event : events) {
      publication p;
      row.reset();
      row.bind(1, event.event_id);
      lowest.reset();
      lowest.bind(1, event.aggregate_id);
      head.reset();
      head.bind(1, event.aggregate_id);
      if (row.executeStep()) {
        p.where = publication::state::present;
        p.status = row.getColumn(0).getString();
        if (!row.getColumn(1).isNull())
          p.published_at = row.getColumn(1).getInt64();
      } else if (lowest.executeStep() && !lowest.getColumn(0).isNull()) {
        if (event.seq < lowest.getColumn(0).getInt64())
          p.where = publication::state::purged;
      } else if (head.executeStep() &&
                 event.seq <= head.getColumn(0).getInt64()) {
        p.where = publication::state::purged;
      }
      found.push_back(std::move(p));
    }
    snapshot.commit();
    return found;
  } catch (...) {
    rethrow_as_store_error("read_publications");
  }
}

} // namespace outbox::storage
