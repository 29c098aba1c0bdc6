#pragma once

// `outbox trim`: forgets consumers' dedup records that no delivery can need
// any more, keeping `outbox verify` true (trim_rule.hpp says which).

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"
#include "broker/trim_candidates.hpp"

#include <cstddef>
#include <cstdint>

namespace outbox::storage {
class database;
}

namespace outbox::audit {

/// Records per HSCAN page and per script call when `outbox trim --batch` is
/// not given.
inline constexpr int default_trim_batch = 1000;

/// Trims the records of `processed` applied before `cutoff` (Redis TIME,
/// ms) whose event was delivered for good, `batch` records per HSCAN page
/// and per script call. HSCAN returns every record present for the whole
/// scan; pages stay small so Redis is never blocked for long, and each
/// page's rows are read from the outbox before its candidates are checked
/// against the lists. `totals` says what was done, also when this throws
/// (store_error, broker_error) after some script calls: a rerun goes on.
void trim_delivered(storage::database& db, broker::connection& redis,
                    const broker::keys& names, std::int64_t cutoff,
                    std::size_t batch, broker::trim_totals& totals);

} // namespace outbox::audit
