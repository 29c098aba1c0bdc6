#pragma once

// The SQL of the lease protocol, in one place: sqlite::lease_store runs it,
// and the tests check the hot queries' plans. Not part of the storage
// interface.

namespace outbox::storage::sqlite::sql {

/// Claim candidates with ?2 < rowid <= ?3, in rowid (= per-aggregate seq)
/// order: due PENDING rows merged with SENDING rows whose lease expired
/// (?1 = now). Each arm repeats its partial index's literal term; SQLite
/// merges the two index walks (the rowid range is a seek into
/// outbox_pending) and sorts only the expired leases, never the whole table.
inline constexpr const char* claim_candidates =
    "SELECT rowid, event_id, aggregate_id, seq, event_type, payload, status,"
    " lease_epoch, attempts, created_at, COALESCE(last_error, ''), owner,"
    " COALESCE(headers, '')"
    " FROM outbox INDEXED BY outbox_pending"
    " WHERE status = 'PENDING' AND available_at <= ?1"
    " AND rowid > ?2 AND rowid <= ?3"
    " UNION ALL "
    "SELECT rowid, event_id, aggregate_id, seq, event_type, payload, status,"
    " lease_epoch, attempts, created_at, COALESCE(last_error, ''), owner,"
    " COALESCE(headers, '')"
    " FROM outbox INDEXED BY outbox_leased"
    " WHERE status = 'SENDING' AND lease_until <= ?1"
    " AND rowid > ?2 AND rowid <= ?3"
    " ORDER BY 1";

/// The head of an aggregate: its lowest seq that is not PUBLISHED yet
/// (published_at IS NULL exactly then; it is outbox_unpublished's term).
inline constexpr const char* head_seq =
    "SELECT MIN(seq) FROM outbox"
    " WHERE aggregate_id = ? AND published_at IS NULL";

/// Leases a claimed row to ?1 until ?2, claimed at ?3 (the row is ?4): a
/// new epoch and one more attempt.
inline constexpr const char* take =
    "UPDATE outbox SET status = 'SENDING', owner = ?,"
    " lease_until = ?, claimed_at = ?, lease_epoch = lease_epoch + 1,"
    " attempts = attempts + 1 WHERE rowid = ?";

/// Gives a row up: FAILED, no owner, no lease (?1 = last_error, ?2 = rowid).
inline constexpr const char* fail_row =
    "UPDATE outbox SET status = 'FAILED', owner = NULL,"
    " lease_until = 0, last_error = ? WHERE rowid = ?";

/// Backs a row off after a publish error (?1 = available_at,
/// ?2 = last_error, ?3 = rowid); the fence was checked by held_row.
inline constexpr const char* back_off_row =
    "UPDATE outbox SET status = 'PENDING', owner = NULL,"
    " lease_until = 0, available_at = ?, last_error = ?"
    " WHERE rowid = ?";

/// The WHERE clause that fences every update by a relay: the row is still
/// leased, to this owner, by the claim that handed out this epoch. Bound as
/// (rowid, event_id, owner, lease_epoch): the rowid finds the row without
/// the event_id index, the event_id keeps the row's identity exact.
#define OUTBOX_FENCE                                                           \
  " WHERE rowid = ? AND event_id = ? AND owner = ? AND lease_epoch = ?"        \
  " AND status = 'SENDING'"

/// The fenced ack (?1 = published_at).
inline constexpr const char* ack_row =
    "UPDATE outbox SET status = 'PUBLISHED', owner = NULL, lease_until = 0,"
    " published_at = ?, last_error = NULL" OUTBOX_FENCE;

/// The fenced release; available_at stays as it was: the row was due when
/// it was claimed.
inline constexpr const char* release_row =
    "UPDATE outbox SET status = 'PENDING', owner = NULL, lease_until = 0,"
    " attempts = MAX(attempts - 1, 0)" OUTBOX_FENCE;

/// The fenced renewal (?1 = lease_until).
inline constexpr const char* renew_row =
    "UPDATE outbox SET lease_until = ?" OUTBOX_FENCE;

/// Whether a lease is still held, and the row's attempts.
inline constexpr const char* held_row =
    "SELECT rowid, attempts FROM outbox" OUTBOX_FENCE;

#undef OUTBOX_FENCE

/// The rowid of an event, for leases that do not carry it.
inline constexpr const char* locate_event =
    "SELECT rowid FROM outbox WHERE event_id = ?";

} // namespace outbox::storage::sqlite::sql
