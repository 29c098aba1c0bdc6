#include "storage/postgres/retention_store.hpp"

#include "storage/lease_policy.hpp"
#include "storage/postgres/session.hpp"
#include "storage/store_error.hpp"

namespace outbox::storage::postgres {

purge_batch retention_store::purge_published(millis cutoff,
                                             std::int64_t after_rowid,
                                             int limit) {
  detail::check_purge_limit(limit);
  auto done = link_.run("purge", "purge",
                        {std::to_string(after_rowid), std::to_string(limit),
                         std::to_string(purge_scan_bound(limit)),
                         std::to_string(cutoff)});
  purge_batch batch;
  batch.deleted = static_cast<int>(done.int64(0, 0));
  batch.request_keys = static_cast<int>(done.int64(0, 1));
  batch.aggregate_heads = static_cast<int>(done.int64(0, 2));
  batch.last_rowid = done.int64(0, 3);
  batch.done = done.boolean(0, 4);
  return batch;
}

} // namespace outbox::storage::postgres
