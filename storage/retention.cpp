// outbox_store::purge_published: the retention side of the outbox table,
// behind `outbox purge`.

#include "storage/outbox_store.hpp"

#include "storage/outbox_store_impl.hpp"
#include "storage/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace outbox::storage {

std::int64_t purge_scan_bound(int limit) {
  return std::max<std::int64_t>(4 * static_cast<std::int64_t>(limit), 1024);
}

purge_batch outbox_store::purge_published(millis cutoff,
                                          std::int64_t after_rowid, int limit) {
  if (limit < 1)
    throw store_error(store_errc::invalid_input,
                      "purge: batch must be at least 1 (got " +
                          std::to_string(limit) + ")");
  purge_batch result;
  result.last_rowid = after_rowid;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
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
      detail::statement_use walk{impl_->purge_walk};
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
          detail::statement_use older{impl_->older_in_aggregate};
          older->bind(1, aggregate_id);
          older->bind(2, seq);
          older->executeStep();
          if (older->getColumn(0).getInt64() != doomed_before[aggregate_id])
            continue;
        }
        ++doomed_before[aggregate_id];
        detail::statement_use newer{impl_->newer_in_aggregate};
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
        detail::statement_use keys{impl_->delete_request_keys};
        keys->bind(1, row.rowid);
        result.request_keys += keys->exec();
      }
      detail::statement_use remove{impl_->delete_row};
      remove->bind(1, row.rowid);
      result.deleted += remove->exec();
      if (row.newest) {
        // The aggregate's last row: its seq lives on in aggregate_heads, so
        // the next event appended to it does not start again at 1.
        detail::statement_use head{impl_->keep_head};
        head->bind(1, row.aggregate_id);
        head->bind(2, row.seq);
        head->exec();
        ++result.aggregate_heads;
      }
    }
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("purge", impl_->name);
  }
  return result;
}

} // namespace outbox::storage
