// sqlite::lease_store: the fenced updates of the lease protocol (the claim
// is in claim.cpp).

#include "storage/sqlite/lease_store.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/lease_sql.hpp"
#include "storage/sqlite/lease_store_impl.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>

namespace outbox::storage::sqlite {

lease_store::impl::impl(SQLite::Database& database)
    : db(database), name(database_name(database)),
      claim_candidates(db, sql::claim_candidates), head_seq(db, sql::head_seq),
      take(db, sql::take), fail_row(db, sql::fail_row),
      locate_event(db, sql::locate_event), ack_row(db, sql::ack_row),
      release_row(db, sql::release_row), renew_row(db, sql::renew_row),
      held_row(db, sql::held_row), back_off_row(db, sql::back_off_row) {}

void lease_store::impl::give_up(std::int64_t rowid, const std::string& error) {
  statement_use update{fail_row};
  update->bind(1, error);
  update->bind(2, rowid);
  update->exec();
}

bool lease_store::impl::run_fenced(SQLite::Statement& statement, int index,
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
    statement_use locate{locate_event};
    locate->bindNoCopy(1, lease.event_id);
    if (locate->executeStep())
      rowid = locate->getColumn(0).getInt64();
  }
  return rowid != 0 && rowid != lease.rowid && run(rowid);
}

lease_store::lease_store(SQLite::Database& db)
    : impl_(prepare_store<impl>(db)) {}

lease_store::~lease_store() = default;

ack_result lease_store::ack_held(const std::string& owner,
                                 const std::vector<event_lease>& leases,
                                 millis now) {
  ack_result result;
  write_transaction(impl_->db, "ack", impl_->name, [&] {
    statement_use update{impl_->ack_row};
    update->bind(1, now);
    for (const auto& lease : leases) {
      if (impl_->run_fenced(*update, 2, owner, lease))
        ++result.acked;
      else
        result.rejected.push_back(lease.event_id);
    }
  });
  return result;
}

int lease_store::release_held(const std::string& owner,
                              const std::vector<event_lease>& leases) {
  int released = 0;
  write_transaction(impl_->db, "release", impl_->name, [&] {
    statement_use update{impl_->release_row};
    for (const auto& lease : leases)
      released += impl_->run_fenced(*update, 1, owner, lease) ? 1 : 0;
  });
  return released;
}

int lease_store::renew_held(const std::string& owner,
                            const std::vector<event_lease>& leases,
                            millis lease_until) {
  int held = 0;
  write_transaction(impl_->db, "renew", impl_->name, [&] {
    statement_use update{impl_->renew_row};
    update->bind(1, lease_until);
    for (const auto& lease : leases)
      held += impl_->run_fenced(*update, 2, owner, lease) ? 1 : 0;
  });
  return held;
}

failure_result lease_store::fail_held(const std::string& owner,
                                      const std::vector<event_lease>& leases,
                                      const std::string& error, millis now,
                                      const lease_policy& policy) {
  failure_result result;
  write_transaction(impl_->db, "fail", impl_->name, [&] {
    for (const auto& lease : leases) {
      std::int64_t rowid = 0;
      int attempts = 0;
      {
        statement_use held{impl_->held_row};
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
      statement_use back_off{impl_->back_off_row};
      back_off->bind(1, now + backoff_delay(attempts, policy));
      back_off->bind(2, error);
      back_off->bind(3, rowid);
      back_off->exec();
      ++result.backed_off;
    }
  });
  return result;
}

} // namespace outbox::storage::sqlite
