#pragma once

// The SQL of the lease protocol's hot queries, shared by the outbox store and
// the tests that check their query plans. Not part of the storage interface.

namespace outbox::storage::sql {

/// Claim candidates, in rowid (= per-aggregate seq) order: due PENDING rows
/// merged with SENDING rows whose lease expired (?1 = now). Each arm repeats
/// its partial index's literal term; SQLite merges the two index walks, and
/// sorts only the expired leases, never the whole table.
inline constexpr const char* claim_candidates =
    "SELECT rowid, event_id, aggregate_id, seq, event_type, payload, status,"
    " lease_epoch, attempts, created_at, COALESCE(last_error, '')"
    " FROM outbox INDEXED BY outbox_pending"
    " WHERE status = 'PENDING' AND available_at <= ?1"
    " UNION ALL "
    "SELECT rowid, event_id, aggregate_id, seq, event_type, payload, status,"
    " lease_epoch, attempts, created_at, COALESCE(last_error, '')"
    " FROM outbox INDEXED BY outbox_leased"
    " WHERE status = 'SENDING' AND lease_until <= ?1"
    " ORDER BY 1";

/// The head of an aggregate: its lowest seq that is not PUBLISHED yet.
inline constexpr const char* head_seq =
    "SELECT MIN(seq) FROM outbox"
    " WHERE aggregate_id = ? AND status <> 'PUBLISHED'";

} // namespace outbox::storage::sql
