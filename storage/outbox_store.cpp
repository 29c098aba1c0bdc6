#include "storage/outbox_store.hpp"

#include "storage/database.hpp"
#include "storage/outbox_sql.hpp"
#include "storage/outbox_store_impl.hpp"
#include "storage/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <unordered_set>

namespace outbox::storage {

outbox_store::impl::impl(SQLite::Database& database)
    : db(database), name(detail::database_name(database)),
      claim_candidates(db, sql::claim_candidates), head_seq(db, sql::head_seq),
      take(db, "UPDATE outbox SET status = 'SENDING', owner = ?,"
               " lease_until = ?, lease_epoch = lease_epoch + 1,"
               " attempts = attempts + 1 WHERE rowid = ?"),
      fail_row(db, "UPDATE outbox SET status = 'FAILED', owner = NULL,"
                   " lease_until = 0, last_error = ? WHERE rowid = ?"),
      locate_event(db, sql::locate_event), ack_row(db, sql::ack_row),
      release_row(db, sql::release_row), renew_row(db, sql::renew_row),
      held_row(db, sql::held_row),
      back_off_row(db, "UPDATE outbox SET status = 'PENDING', owner = NULL,"
                       " lease_until = 0, available_at = ?, last_error = ?"
                       " WHERE rowid = ?"),
      retry_row(db, "UPDATE outbox SET status = 'PENDING', attempts = 0,"
                    " available_at = ?, lease_until = 0"
                    " WHERE event_id = ? AND status = 'FAILED'"),
      retry_all(db, "UPDATE outbox SET status = 'PENDING', attempts = 0,"
                    " available_at = ?, lease_until = 0"
                    " WHERE status = 'FAILED'"),
      // Each count repeats a partial index's term; PUBLISHED is the rest.
      counts(db, "SELECT (SELECT COUNT(*) FROM outbox),"
                 " (SELECT COUNT(*) FROM outbox WHERE status = 'PENDING'),"
                 " (SELECT COUNT(*) FROM outbox WHERE status = 'SENDING'),"
                 " (SELECT COUNT(*) FROM outbox WHERE status = 'FAILED'),"
                 " (SELECT COUNT(*) FROM orders),"
                 " (SELECT MIN(created_at) FROM outbox"
                 "  WHERE status = 'PENDING'),"
                 " (SELECT MIN(created_at) FROM outbox"
                 "  WHERE status = 'SENDING'),"
                 " (SELECT COUNT(*) FROM outbox"
                 "  WHERE status = 'SENDING' AND lease_until <= ?1)"),
      leases_by_owner(db, "SELECT owner, COUNT(*), MIN(lease_until),"
                          " MAX(lease_until)"
                          " FROM outbox WHERE status = 'SENDING'"
                          " GROUP BY owner ORDER BY owner"),
      failed_rows(db, "SELECT event_id, aggregate_id, seq, event_type,"
                      " attempts, COALESCE(last_error, '') FROM outbox"
                      " WHERE status = 'FAILED' ORDER BY rowid LIMIT 100"),
      failed_page(db, "SELECT rowid, event_id, aggregate_id, seq, event_type,"
                      " attempts, COALESCE(last_error, '') FROM outbox"
                      " WHERE status = 'FAILED' AND rowid > ?"
                      " ORDER BY rowid LIMIT ?"),
      // A walk in rowid order (a seek on the table's own b-tree), bounded
      // by LIMIT; the conditions are columns, not filters, so that the
      // walk counts the rows it looked at and sees where to stop.
      purge_walk(db, "SELECT rowid, aggregate_id, seq,"
                     " status = 'PUBLISHED' AND published_at < ?2,"
                     " created_at >= ?2 FROM outbox WHERE rowid > ?1"
                     " ORDER BY rowid LIMIT ?3"),
      newer_in_aggregate(db, "SELECT 1 FROM outbox"
                             " WHERE aggregate_id = ? AND seq > ? LIMIT 1"),
      older_in_aggregate(db, "SELECT COUNT(*) FROM outbox"
                             " WHERE aggregate_id = ? AND seq < ?"),
      delete_request_keys(db, "DELETE FROM request_keys WHERE event_id ="
                              " (SELECT event_id FROM outbox WHERE rowid = ?)"),
      delete_row(db, "DELETE FROM outbox WHERE rowid = ?"
                     " AND status = 'PUBLISHED'"),
      keep_head(db, "INSERT INTO aggregate_heads (aggregate_id, last_seq)"
                    " VALUES (?1, ?2) ON CONFLICT (aggregate_id) DO UPDATE"
                    " SET last_seq = MAX(last_seq, excluded.last_seq)") {}

void outbox_store::impl::give_up(std::int64_t rowid, const std::string& error) {
  detail::statement_use update{fail_row};
  update->bind(1, error);
  update->bind(2, rowid);
  update->exec();
}

bool outbox_store::impl::run_fenced(SQLite::Statement& statement, int index,
                                    const std::string& owner,
                                    const event_lease& lease) {
  // Text is bound without a copy: both strings outlive the step, and every
  // use rebinds them before stepping again.
  auto run = [&](std::int64_t rowid) {
    statement.reset();
    statement.bind(index, rowid);
    statement.bindNoCopy(index + 1, lease.event_id);
    statement.bindNoCopy(index + 2, owner);
    statement.bind(index + 3, lease.epoch);
    return statement.getColumnCount() == 0 ? statement.exec() > 0
                                           : statement.executeStep();
  };
  if (lease.rowid != 0 && run(lease.rowid))
    return true;
  std::int64_t rowid = 0;
  {
    detail::statement_use locate{locate_event};
    locate->bindNoCopy(1, lease.event_id);
    if (locate->executeStep())
      rowid = locate->getColumn(0).getInt64();
  }
  return rowid != 0 && rowid != lease.rowid && run(rowid);
}

void detail::check_owner(const std::string& owner) {
  if (owner.empty())
    throw store_error(store_errc::invalid_input, "owner must not be empty");
}

void detail::check_policy(const lease_policy& policy) {
  auto bad = [](const std::string& what) {
    throw store_error(store_errc::invalid_input, "lease policy: " + what);
  };
  if (policy.ttl < 1)
    bad("ttl must be at least 1 ms (got " + std::to_string(policy.ttl) + ")");
  if (policy.batch < 1)
    bad("batch must be at least 1 (got " + std::to_string(policy.batch) + ")");
  if (policy.max_attempts < 1)
    bad("max_attempts must be at least 1 (got " +
        std::to_string(policy.max_attempts) + ")");
  if (policy.backoff_base < 0 || policy.backoff_max < 0)
    bad("backoff_base and backoff_max must not be negative");
}

std::vector<event_lease> claim::leases() const {
  std::vector<event_lease> result;
  result.reserve(events.size());
  for (const auto& event : events)
    result.push_back(event_lease{event.event_id, event.epoch, event.rowid});
  return result;
}

millis backoff_delay(int attempts, const lease_policy& policy) {
  auto cap = std::max<millis>(policy.backoff_max, 0);
  auto delay = std::min(std::max<millis>(policy.backoff_base, 0), cap);
  // Doubling stops at the cap, so this never overflows and runs at most ~63
  // times whatever `attempts` is.
  for (int i = 1; i < attempts && delay > 0 && delay < cap; ++i)
    delay = delay > cap / 2 ? cap : delay * 2;
  return delay;
}

outbox_store::outbox_store(SQLite::Database& db) {
  require_schema(db);
  try {
    impl_ = std::make_unique<impl>(db);
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("outbox_store", detail::database_name(db));
  }
}

outbox_store::~outbox_store() = default;

ack_result outbox_store::ack(const std::string& owner,
                             const std::vector<event_lease>& leases,
                             millis now) {
  ack_result result;
  if (leases.empty())
    return result;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    detail::statement_use update{impl_->ack_row};
    update->bind(1, now);
    for (const auto& lease : leases) {
      if (impl_->run_fenced(*update, 2, owner, lease))
        ++result.acked;
      else
        result.rejected.push_back(lease.event_id);
    }
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("ack", impl_->name);
  }
  return result;
}

int outbox_store::release(const std::string& owner,
                          const std::vector<event_lease>& leases) {
  int released = 0;
  if (leases.empty())
    return released;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    detail::statement_use update{impl_->release_row};
    for (const auto& lease : leases)
      released += impl_->run_fenced(*update, 1, owner, lease) ? 1 : 0;
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("release", impl_->name);
  }
  return released;
}

int outbox_store::renew(const std::string& owner,
                        const std::vector<event_lease>& leases,
                        millis lease_until) {
  int held = 0;
  if (leases.empty())
    return held;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    detail::statement_use update{impl_->renew_row};
    update->bind(1, lease_until);
    for (const auto& lease : leases)
      held += impl_->run_fenced(*update, 2, owner, lease) ? 1 : 0;
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("renew", impl_->name);
  }
  return held;
}

failure_result outbox_store::fail(const std::string& owner,
                                  const std::vector<event_lease>& leases,
                                  const std::string& error, millis now,
                                  const lease_policy& policy) {
  detail::check_policy(policy);
  failure_result result;
  if (leases.empty())
    return result;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    for (const auto& lease : leases) {
      std::int64_t rowid = 0;
      int attempts = 0;
      {
        detail::statement_use held{impl_->held_row};
        if (!impl_->run_fenced(*held, 1, owner, lease)) {
          ++result.not_held;
          continue;
        }
        rowid = held->getColumn(0).getInt64();
        attempts = held->getColumn(1).getInt();
      }
      if (attempts >= policy.max_attempts) {
        impl_->give_up(rowid, error);
        ++result.failed;
        result.failed_event_ids.push_back(lease.event_id);
        continue;
      }
      detail::statement_use back_off{impl_->back_off_row};
      back_off->bind(1, now + backoff_delay(attempts, policy));
      back_off->bind(2, error);
      back_off->bind(3, rowid);
      back_off->exec();
      ++result.backed_off;
    }
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("fail", impl_->name);
  }
  return result;
}

std::vector<std::string>
outbox_store::retry(const std::vector<std::string>& event_ids, millis now) {
  std::vector<std::string> not_failed;
  if (event_ids.empty())
    return not_failed;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    // An id given twice is retried once and not reported as "not FAILED".
    std::unordered_set<std::string> seen;
    for (const auto& event_id : event_ids) {
      if (!seen.insert(event_id).second)
        continue;
      detail::statement_use update{impl_->retry_row};
      update->bind(1, now);
      update->bind(2, event_id);
      if (update->exec() == 0)
        not_failed.push_back(event_id);
    }
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("retry", impl_->name);
  }
  return not_failed;
}

int outbox_store::retry_all_failed(millis now) {
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    detail::statement_use update{impl_->retry_all};
    update->bind(1, now);
    auto retried = update->exec();
    transaction.commit();
    return retried;
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("retry", impl_->name);
  }
}

failed_page outbox_store::failed_rows(std::int64_t after_rowid, int limit) {
  if (limit < 1)
    throw store_error(store_errc::invalid_input,
                      "failed_rows: limit must be at least 1 (got " +
                          std::to_string(limit) + ")");
  failed_page page;
  page.last_rowid = after_rowid;
  try {
    detail::statement_use query{impl_->failed_page};
    query->bind(1, after_rowid);
    query->bind(2, limit);
    while (query->executeStep()) {
      page.last_rowid = query->getColumn(0).getInt64();
      page.rows.push_back(failed_row{
          query->getColumn(1).getString(), query->getColumn(2).getString(),
          query->getColumn(3).getInt64(), query->getColumn(4).getString(),
          query->getColumn(5).getInt(), query->getColumn(6).getString()});
    }
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("failed_rows", impl_->name);
  }
  return page;
}

} // namespace outbox::storage
