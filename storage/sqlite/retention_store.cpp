// sqlite::retention_store: the retention side of the outbox table, behind
// `outbox purge`.

#include "storage/sqlite/retention_store.hpp"

#include "storage/lease_policy.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace outbox::storage::sqlite {

namespace sql {

/// A walk in rowid order (a seek on the table's own b-tree), bounded by
/// LIMIT; the conditions are columns, not filters, so that the walk counts
/// the rows it looked at and sees where to stop.
constexpr const char* purge_walk =
    "SELECT rowid, aggregate_id, seq,"
    " status = 'PUBLISHED' AND published_at < ?2,"
    " created_at >= ?2 FROM outbox WHERE rowid > ?1"
    " ORDER BY rowid LIMIT ?3";

constexpr const char* newer_in_aggregate =
    "SELECT 1 FROM outbox WHERE aggregate_id = ? AND seq > ? LIMIT 1";

constexpr const char* older_in_aggregate =
    "SELECT COUNT(*) FROM outbox WHERE aggregate_id = ? AND seq < ?";

constexpr const char* delete_request_keys =
    "DELETE FROM request_keys WHERE event_id ="
    " (SELECT event_id FROM outbox WHERE rowid = ?)";

constexpr const char* delete_row =
    "DELETE FROM outbox WHERE rowid = ? AND status = 'PUBLISHED'";

constexpr const char* keep_head =
    "INSERT INTO aggregate_heads (aggregate_id, last_seq)"
    " VALUES (?1, ?2) ON CONFLICT (aggregate_id) DO UPDATE"
    " SET last_seq = MAX(last_seq, excluded.last_seq)";

} // namespace sql

struct retention_store::impl {
  explicit impl(SQLite::Database& database)
      : db(database), name(database_name(database)),
        purge_walk(db, sql::purge_walk),
        newer_in_aggregate(db, sql::newer_in_aggregate),
        older_in_aggregate(db, sql::older_in_aggregate),
        delete_request_keys(db, sql::delete_request_keys),
        delete_row(db, sql::delete_row), keep_head(db, sql::keep_head) {}

  SQLite::Database& db;
  std::string name;
  SQLite::Statement purge_walk;
  SQLite::Statement newer_in_aggregate;
  SQLite::Statement older_in_aggregate;
  SQLite::Statement delete_request_keys;
  SQLite::Statement delete_row;
  SQLite::Statement keep_head;
};

retention_store::retention_store(SQLite::Database& db)
    : impl_(prepare_store<impl>(db)) {}

retention_store::~retention_store() = default;

purge_batch retention_store::purge_published(millis cutoff,
                                             std::int64_t after_rowid,
                                             int limit) {
  detail::check_purge_limit(limit);
  purge_batch result;
  result.last_rowid = after_rowid;
  write_transaction(impl_->db, "purge", impl_->name, [&] {
    struct doomed_row {
      std::int64_t rowid;
      std::string aggregate_id;
      std::int64_t seq;
      bool newest;
    };
    std::vector<doomed_row> doomed;
    // Per aggregate, the rows this batch already dooms: a row goes only
    // when every lower seq of its aggregate goes before it (purge deletes a
    // prefix; verify and trim rely on it), whatever the relays' clocks
    // made of published_at.
    std::map<std::string, std::int64_t> doomed_before;
    {
      auto bound = purge_scan_bound(limit);
      std::int64_t looked_at = 0;
      statement_use walk{impl_->purge_walk};
      walk->bind(1, after_rowid);
      walk->bind(2, cutoff);
      walk->bind(3, bound);
      while (static_cast<int>(doomed.size()) < limit && walk->executeStep()) {
        ++looked_at;
        // Rows are appended in created_at order (up to a lock wait) and
        // published after they were created: from here on nothing was
        // published before the cutoff. A row written out of order behind
        // this one is purged by a later run.
        if (walk->getColumn(4).getInt() != 0) {
          result.done = true;
          break;
        }
        auto rowid = walk->getColumn(0).getInt64();
        result.last_rowid = rowid;
        if (walk->getColumn(3).getInt() == 0)
          continue;
        auto aggregate_id = walk->getColumn(1).getString();
        auto seq = walk->getColumn(2).getInt64();
        {
          statement_use older{impl_->older_in_aggregate};
          older->bind(1, aggregate_id);
          older->bind(2, seq);
          older->executeStep();
          if (older->getColumn(0).getInt64() != doomed_before[aggregate_id])
            continue;
        }
        ++doomed_before[aggregate_id];
        statement_use newer{impl_->newer_in_aggregate};
        newer->bind(1, aggregate_id);
        newer->bind(2, seq);
        doomed.push_back(
            {rowid, std::move(aggregate_id), seq, !newer->executeStep()});
      }
      if (!result.done && static_cast<int>(doomed.size()) < limit &&
          looked_at < bound)
        result.done = true; // the walk reached the end of the table
    }
    for (const auto& row : doomed) {
      // request_keys.event_id references the row (foreign keys are on):
      // its key goes with it. A request retried after this is no longer
      // recognised as a replay, so the retention must outlast client retries.
      {
        statement_use keys{impl_->delete_request_keys};
        keys->bind(1, row.rowid);
        result.request_keys += keys->exec();
      }
      statement_use remove{impl_->delete_row};
      remove->bind(1, row.rowid);
      result.deleted += remove->exec();
      if (row.newest) {
        // The aggregate's last row: its seq lives on in aggregate_heads, so
        // the next event appended to it does not start again at 1.
        statement_use head{impl_->keep_head};
        head->bind(1, row.aggregate_id);
        head->bind(2, row.seq);
        head->exec();
        ++result.aggregate_heads;
      }
    }
  });
  return result;
}

} // namespace outbox::storage::sqlite
