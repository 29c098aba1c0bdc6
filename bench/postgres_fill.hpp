#pragma once

#include "storage/db_options.hpp"

#include <cstdint>
#include <string>

namespace outbox::bench {

/// fill_outbox (fill.hpp) on the bench's PostgreSQL scratch database: the
/// same rows, event ids made from "<tag>-<i>" (a uuid, as the column
/// wants), aggregate heads kept in step.
void fill_outbox_postgres(const storage::db_options& db, std::int64_t events,
                          std::int64_t aggregates, const std::string& status,
                          const std::string& tag);

} // namespace outbox::bench
