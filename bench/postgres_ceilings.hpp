#pragma once

// The database ceilings on PostgreSQL: the raw rate of the statements the
// writer and a relay are built from, over libpq, with the same schema,
// server and payloads and none of the stores' logic.

#include "storage/db_options.hpp"

#include <cstdint>

namespace outbox::bench {

/// Orders as the writer stores them (request key, order, outbox row),
/// `group` orders per transaction in one statement (one round trip), as
/// the writer's place_orders, committed synchronously as orders are.
/// Orders per second.
double postgres_order_inserts(const storage::db_options& db,
                              std::int64_t orders, int group);

/// Leases `batch` PENDING rows with one UPDATE ... FOR UPDATE SKIP LOCKED
/// RETURNING, then marks them PUBLISHED with one UPDATE over an array of
/// ids, each its own transaction, committed as the relays commit
/// (`db` as db_options::for_relay gives it: synchronous_commit off unless
/// FULL): the relay's two statements without the head-of-line rule and
/// the fence. Rows per second.
double postgres_claim_ack(const storage::db_options& db, std::int64_t rows,
                          int batch);

} // namespace outbox::bench
