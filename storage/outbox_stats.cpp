// outbox_store::stats: the numbers behind `outbox status` and the metrics.

#include "storage/outbox_store.hpp"

#include "storage/outbox_store_impl.hpp"
#include "storage/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>

namespace outbox::storage {

outbox_stats outbox_store::stats(millis now) {
  outbox_stats result;
  try {
    // A read-only snapshot: DEFERRED, so `outbox status` never takes the
    // write lock away from writers and relays.
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::DEFERRED);
    {
      detail::statement_use counts{impl_->counts};
      counts->bind(1, now);
      counts->executeStep();
      auto total = counts->getColumn(0).getInt64();
      auto pending = counts->getColumn(1).getInt64();
      auto sending = counts->getColumn(2).getInt64();
      auto failed = counts->getColumn(3).getInt64();
      result.by_status[status::pending] = pending;
      result.by_status[status::sending] = sending;
      result.by_status[status::failed] = failed;
      result.by_status[status::published] = total - pending - sending - failed;
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
      detail::statement_use leases{impl_->leases_by_owner};
      while (leases->executeStep())
        result.leases.push_back(owner_leases{
            leases->getColumn(0).getString(), leases->getColumn(1).getInt(),
            leases->getColumn(2).getInt64(), leases->getColumn(3).getInt64()});
    }
    {
      detail::statement_use failed{impl_->failed_rows};
      while (failed->executeStep())
        result.failed.push_back(failed_row{
            failed->getColumn(0).getString(), failed->getColumn(1).getString(),
            failed->getColumn(2).getInt64(), failed->getColumn(3).getString(),
            failed->getColumn(4).getInt(), failed->getColumn(5).getString()});
    }
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("stats", impl_->name);
  }
  return result;
}

} // namespace outbox::storage
