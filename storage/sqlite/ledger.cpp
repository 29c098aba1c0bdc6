#include "storage/sqlite/database.hpp"

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace outbox::storage::sqlite {

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

} // namespace outbox::storage::sqlite
