#include "storage/purge_run.hpp"

#include "storage/retention_store.hpp"

namespace outbox::storage {

purge_totals purge_published_before(retention_store& store, millis cutoff,
                                    int batch_limit) {
  purge_totals totals;
  purge_batch batch;
  do {
    try {
      batch = store.purge_published(cutoff, batch.last_rowid, batch_limit);
    } catch (const store_error& e) {
      // Nothing committed: the plain failure. After committed batches the
      // caller reports what stays done.
      if (totals.batches == 0)
        throw;
      totals.stopped_by = e;
      return totals;
    }
    ++totals.batches;
    totals.deleted += batch.deleted;
    totals.request_keys += batch.request_keys;
    totals.aggregate_heads += batch.aggregate_heads;
  } while (!batch.done);
  return totals;
}

} // namespace outbox::storage
