#pragma once

// What the lab reads of app.db besides the operator views (the report's row
// counts, the order check's rows of one aggregate), whatever reads them
// (storage/sqlite/lab_reads.hpp on the lab's SQLite file).

#include "storage/clock.hpp"

#include <cstdint>

namespace outbox::storage {

/// COUNT(*) of the orders and outbox tables.
struct table_counts {
  std::int64_t orders = 0;
  std::int64_t outbox = 0;
};

/// One outbox row of an aggregate, as the order check shows it.
struct aggregate_row {
  std::int64_t seq = 0;
  millis created_at = 0;
};

} // namespace outbox::storage
