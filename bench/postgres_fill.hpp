#pragma once

#include "broker/entry.hpp"
#include "storage/db_options.hpp"
#include "storage/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::bench {

/// fill_outbox (fill.hpp) on the bench's PostgreSQL scratch database: the
/// same rows, event ids made from "<tag>-<i>" (a uuid, as the column
/// wants), aggregate heads kept in step; `at` 0 is the server's clock.
void fill_outbox_postgres(const storage::db_options& db, std::int64_t events,
                          std::int64_t aggregates, storage::row_status status,
                          const std::string& tag, std::int64_t at);

/// filled_entries (fill.hpp) on the bench's PostgreSQL scratch database.
std::vector<broker::event_entry>
filled_entries_postgres(const storage::db_options& db, const std::string& tag);

} // namespace outbox::bench
