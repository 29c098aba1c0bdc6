#pragma once

// The counts every reader of outbox_stats takes the same way: the orders
// and the rows in each status, into a struct of its own (the pipeline's
// snapshot, the lab's progress).

#include "storage/outbox_views.hpp"
#include "storage/types.hpp"

namespace outbox::storage {

/// Sets `to.orders` and `to.pending`, `sending`, `published` and `failed`
/// (rows in that status) from `stats`.
template <class Counts>
void copy_outbox_counts(const outbox_stats& stats, Counts& to) {
  to.orders = stats.orders;
  to.pending = stats.count(row_status::pending);
  to.sending = stats.count(row_status::sending);
  to.published = stats.count(row_status::published);
  to.failed = stats.count(row_status::failed);
}

} // namespace outbox::storage
