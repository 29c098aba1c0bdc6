#pragma once

// Prefilling the stores for a stage, faster than the pipeline could, so a
// stage measures only itself.

#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "storage/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::bench {

/// Inserts `events` OrderPlaced rows with `status` (pending or published)
/// spread round-robin over `aggregates` aggregates ("<tag>-a<k>", seqs
/// contiguous from 1 in rowid order), in one transaction of plain SQL,
/// created (and published) at `at` (ms since the epoch; 0: now).
void fill_outbox(const storage::db_options& db, std::int64_t events,
                 std::int64_t aggregates, storage::row_status status,
                 const std::string& tag, std::int64_t at = 0);

/// The rows fill_outbox wrote with `tag`, as the relay would publish them,
/// in seq order per aggregate.
std::vector<broker::event_entry> filled_entries(const storage::db_options& db,
                                                const std::string& tag);

/// `count` encoded OrderPlaced entries as the relay would publish them,
/// one per aggregate, event ids "<tag>-<i>" from `first`.
std::vector<std::string> encoded_entries(std::int64_t first, std::int64_t count,
                                         const std::string& tag);

/// The same entries, decoded (for the publisher).
std::vector<broker::event_entry>
event_entries(std::int64_t first, std::int64_t count, const std::string& tag);

/// Pushes `count` entries to the queues as the relays would (each to its
/// aggregate's partition), in batches.
void fill_queues(const config::settings& s, std::int64_t count,
                 const std::string& tag);

} // namespace outbox::bench
