// sqlite::outbox_views: what `outbox status`, `outbox failed` and
// `outbox retry` read and change in the SQLite outbox table.

#include "storage/sqlite/outbox_views.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <unordered_set>

namespace outbox::storage::sqlite {

namespace sql {

/// FAILED -> PENDING for one event (?1 = now, ?2 = event_id).
constexpr const char* retry_row =
    "UPDATE outbox SET status = 'PENDING', attempts = 0,"
    " available_at = ?, lease_until = 0"
    " WHERE event_id = ? AND status = 'FAILED'";

/// FAILED -> PENDING for every FAILED row (?1 = now).
constexpr const char* retry_all =
    "UPDATE outbox SET status = 'PENDING', attempts = 0,"
    " available_at = ?, lease_until = 0"
    " WHERE status = 'FAILED'";

/// Each count repeats a partial index's term; PUBLISHED is the rest.
constexpr const char* counts =
    "SELECT (SELECT COUNT(*) FROM outbox),"
    " (SELECT COUNT(*) FROM outbox WHERE status = 'PENDING'),"
    " (SELECT COUNT(*) FROM outbox WHERE status = 'SENDING'),"
    " (SELECT COUNT(*) FROM outbox WHERE status = 'FAILED'),"
    " (SELECT COUNT(*) FROM orders),"
    // The first inserted of the PENDING rows: its rowid is the least in
    // outbox_pending (one lookup, where MIN(created_at) read every PENDING
    // row). SENDING rows are few (the relays' batches): read them all.
    " (SELECT created_at FROM outbox WHERE rowid ="
    "  (SELECT MIN(rowid) FROM outbox WHERE status = 'PENDING')),"
    " (SELECT MIN(created_at) FROM outbox"
    "  WHERE status = 'SENDING'),"
    " (SELECT COUNT(*) FROM outbox"
    "  WHERE status = 'SENDING' AND lease_until <= ?1)";

/// Through the partial indexes outbox_pending and outbox_leased.
constexpr const char* pending_or_sending =
    "SELECT EXISTS (SELECT 1 FROM outbox WHERE status = 'PENDING')"
    " OR EXISTS (SELECT 1 FROM outbox WHERE status = 'SENDING')";

constexpr const char* leases_by_owner =
    "SELECT owner, COUNT(*), MIN(lease_until),"
    " MAX(lease_until), MAX(claimed_at)"
    " FROM outbox WHERE status = 'SENDING'"
    " GROUP BY owner ORDER BY owner";

/// The first 100 FAILED rows, for stats().
constexpr const char* failed_rows =
    "SELECT event_id, aggregate_id, seq, event_type,"
    " attempts, COALESCE(last_error, ''), COALESCE(headers, '') FROM outbox"
    " WHERE status = 'FAILED' ORDER BY rowid LIMIT 100";

/// A page of FAILED rows after ?1, at most ?2.
constexpr const char* failed_page =
    "SELECT rowid, event_id, aggregate_id, seq, event_type,"
    " attempts, COALESCE(last_error, ''), COALESCE(headers, '') FROM outbox"
    " WHERE status = 'FAILED' AND rowid > ?"
    " ORDER BY rowid LIMIT ?";

} // namespace sql

struct outbox_views::impl {
  explicit impl(SQLite::Database& database)
      : db(database), name(database_name(database)),
        retry_row(db, sql::retry_row), retry_all(db, sql::retry_all),
        counts(db, sql::counts),
        pending_or_sending(db, sql::pending_or_sending),
        data_version(db, "PRAGMA data_version"),
        leases_by_owner(db, sql::leases_by_owner),
        failed_rows(db, sql::failed_rows), failed_page(db, sql::failed_page) {}

  SQLite::Database& db;
  std::string name;
  SQLite::Statement retry_row;
  SQLite::Statement retry_all;
  SQLite::Statement counts;
  SQLite::Statement pending_or_sending;
  SQLite::Statement data_version;
  SQLite::Statement leases_by_owner;
  SQLite::Statement failed_rows;
  SQLite::Statement failed_page;
};

outbox_views::outbox_views(SQLite::Database& db)
    : impl_(prepare_store<impl>(db)) {}

outbox_views::~outbox_views() = default;

std::vector<std::string>
outbox_views::retry(const std::vector<std::string>& event_ids, millis now) {
  std::vector<std::string> not_failed;
  if (event_ids.empty())
    return not_failed;
  write_transaction(impl_->db, "retry", impl_->name, [&] {
    // An id given twice is retried once and not reported as "not FAILED".
    std::unordered_set<std::string> seen;
    for (const auto& event_id : event_ids) {
      if (!seen.insert(event_id).second)
        continue;
      statement_use update{impl_->retry_row};
      update->bind(1, now);
      update->bind(2, event_id);
      if (update->exec() == 0)
        not_failed.push_back(event_id);
    }
  });
  return not_failed;
}

int outbox_views::retry_all_failed(millis now) {
  return write_transaction(impl_->db, "retry", impl_->name, [&] {
    statement_use update{impl_->retry_all};
    update->bind(1, now);
    return update->exec();
  });
}

failed_page outbox_views::failed_rows(std::int64_t after_rowid, int limit) {
  if (limit < 1)
    throw store_error(store_errc::invalid_input,
                      "failed_rows: limit must be at least 1 (got " +
                          std::to_string(limit) + ")");
  failed_page page;
  page.last_rowid = after_rowid;
  try {
    statement_use query{impl_->failed_page};
    query->bind(1, after_rowid);
    query->bind(2, limit);
    while (query->executeStep()) {
      page.last_rowid = query->getColumn(0).getInt64();
      page.rows.push_back(failed_row{
          query->getColumn(1).getString(), query->getColumn(2).getString(),
          query->getColumn(3).getInt64(), query->getColumn(4).getString(),
          query->getColumn(5).getInt(), query->getColumn(6).getString(),
          query->getColumn(7).getString()});
    }
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("failed_rows", impl_->name);
  }
  return page;
}

outbox_stats outbox_views::stats(millis now) {
  outbox_stats result;
  // A read-only snapshot: DEFERRED, so `outbox status` never takes the
  // write lock away from writers and relays.
  in_transaction(
      impl_->db, SQLite::TransactionBehavior::DEFERRED, "stats", impl_->name,
      [&] {
        {
          statement_use counts{impl_->counts};
          counts->bind(1, now);
          counts->executeStep();
          auto total = counts->getColumn(0).getInt64();
          auto pending = counts->getColumn(1).getInt64();
          auto sending = counts->getColumn(2).getInt64();
          auto failed = counts->getColumn(3).getInt64();
          result.set_count(row_status::pending, pending);
          result.set_count(row_status::sending, sending);
          result.set_count(row_status::failed, failed);
          result.set_count(row_status::published,
                           total - pending - sending - failed);
          result.orders = counts->getColumn(4).getInt64();
          auto oldest_pending = counts->getColumn(5);
          auto oldest_sending = counts->getColumn(6);
          if (!oldest_pending.isNull() || !oldest_sending.isNull()) {
            auto oldest = oldest_pending.isNull() ? oldest_sending.getInt64()
                          : oldest_sending.isNull()
                              ? oldest_pending.getInt64()
                              : std::min(oldest_pending.getInt64(),
                                         oldest_sending.getInt64());
            result.oldest_unpublished_age = std::max<millis>(now - oldest, 0);
          }
          result.expired_leases = counts->getColumn(7).getInt64();
        }
        {
          statement_use leases{impl_->leases_by_owner};
          while (leases->executeStep()) {
            auto claimed = leases->getColumn(4);
            result.leases.push_back(owner_leases{
                leases->getColumn(0).getString(), leases->getColumn(1).getInt(),
                leases->getColumn(2).getInt64(),
                leases->getColumn(3).getInt64(),
                claimed.isNull() ? std::nullopt
                                 : std::optional<millis>{claimed.getInt64()}});
          }
        }
        {
          statement_use failed{impl_->failed_rows};
          while (failed->executeStep())
            result.failed.push_back(failed_row{
                failed->getColumn(0).getString(),
                failed->getColumn(1).getString(),
                failed->getColumn(2).getInt64(),
                failed->getColumn(3).getString(), failed->getColumn(4).getInt(),
                failed->getColumn(5).getString(),
                failed->getColumn(6).getString()});
        }
      });
  return result;
}

std::optional<std::int64_t> outbox_views::change_mark() {
  try {
    statement_use query{impl_->data_version};
    query->executeStep();
    return query->getColumn(0).getInt64();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("stats", impl_->name);
  }
}

bool outbox_views::has_pending_or_sending() {
  try {
    statement_use query{impl_->pending_or_sending};
    query->executeStep();
    return query->getColumn(0).getInt() != 0;
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("stats", impl_->name);
  }
}

} // namespace outbox::storage::sqlite
