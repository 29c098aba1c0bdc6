#pragma once

// Step 2 of the lab: the dual-write anti-pattern, done on purpose. An order
// is saved in its own store, then "published" to a broker that is down; the
// two stores now disagree and nothing will ever repair it. CAF-free.

#include "broker/broker_fwd.hpp"
#include "lab/plan.hpp"

#include <cstdint>
#include <string>

namespace outbox::lab {

/// What the naive dual write left behind.
struct dualwrite_outcome {
  /// The order it saved (dualwrite.db's orders.id).
  std::int64_t order_id = 0;
  /// COUNT(*) of dualwrite.db's orders, after this run.
  std::int64_t orders = 0;
  /// LLEN dualwrite.events on the lab's Redis: what was really published.
  std::int64_t published = 0;
  /// Where the failed publish went and what it answered.
  std::string broker;
  std::string publish_error;

  /// The first line of dualwrite.out.
  std::string line() const;
};

/// Saves one order in files.dualwrite_db() (never app.db), commits, then
/// RPUSHes its event to `dualwrite.events` on a loopback port held bound
/// but not listening (a broker that refuses, as in a 3-second outage), and
/// counts both sides: orders in that store, entries of that list on the
/// real Redis (`redis`). Throws store_error / broker_error for trouble other
/// than the staged outage.
dualwrite_outcome naive_dual_write(const lab_files& files,
                                   broker::connection& redis);

} // namespace outbox::lab
