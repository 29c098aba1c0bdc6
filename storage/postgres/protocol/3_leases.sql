-- outbox on PostgreSQL: the fenced updates of leases (protocol/1_orders.sql
-- says what these files are and what every statement assumes).

------------------------------------------------- fenced updates of leases --

-- Each takes one owner and the leases as two arrays (event_ids, epochs) and
-- changes only rows still leased to that owner by that claim: the fence is
-- (event_id, owner, lease_epoch, status = 'SENDING'). The event_ids it
-- returns are the rows it changed; the others are rejected (taken over,
-- released, or unknown). An expired lease not yet taken over still holds:
-- no one else has the row, and its epoch is unchanged. One statement each.

-- $1 owner, $2 event_ids, $3 epochs, $4 now_ms
PREPARE ack (text, uuid[], bigint[], bigint) AS
UPDATE outbox o SET status = 'PUBLISHED', owner = NULL, lease_until = NULL,
  published_at = COALESCE(outbox_ts($4), clock_timestamp()),
  last_error = NULL
FROM unnest($2, $3) AS l(event_id, epoch)
WHERE o.event_id = l.event_id AND o.lease_epoch = l.epoch AND o.owner = $1
  AND o.status = 'SENDING' AND outbox_require_leases($1, $2, $3, 'ack')
RETURNING o.event_id;

-- Renewal: lease_until from the same clock as the claim's. $1 owner,
-- $2 event_ids, $3 epochs, $4 now_ms, $5 ttl_ms. Returns the new
-- lease_until with each row still held.
PREPARE renew (text, uuid[], bigint[], bigint, bigint) AS
UPDATE outbox o SET lease_until = COALESCE(outbox_ts($4), clock_timestamp())
                                  + $5 * interval '1 millisecond'
FROM unnest($2, $3) AS l(event_id, epoch)
WHERE o.event_id = l.event_id AND o.lease_epoch = l.epoch AND o.owner = $1
  AND o.status = 'SENDING' AND outbox_require_leases($1, $2, $3, 'renew')
  -- ttl 0 with a lease end: the caller's clock names the end itself.
  AND outbox_require($5 > 0 OR ($4 IS NOT NULL AND $5 = 0),
                     'renew: ttl_ms must be above 0')
RETURNING o.event_id, outbox_ms(o.lease_until) AS lease_until;

-- Release on a graceful stop: PENDING, due as it was, the claim's attempt
-- refunded. $1 owner, $2 event_ids, $3 epochs
PREPARE release (text, uuid[], bigint[]) AS
UPDATE outbox o SET status = 'PENDING', owner = NULL, lease_until = NULL,
  attempts = greatest(o.attempts - 1, 0)
FROM unnest($2, $3) AS l(event_id, epoch)
WHERE o.event_id = l.event_id AND o.lease_epoch = l.epoch AND o.owner = $1
  AND o.status = 'SENDING' AND outbox_require_leases($1, $2, $3, 'release')
RETURNING o.event_id;

-- A publish error: back off (PENDING, due after delays_ms[attempts]) or
-- FAILED once attempts reached max_attempts. The delays come from the
-- shared rule (backoff_delay(a, policy) for a = 1..max_attempts), so the
-- rule stays in one place. $1 owner, $2 event_ids, $3 epochs, $4 error,
-- $5 now_ms, $6 max_attempts, $7 delays_ms: at least one, none NULL or
-- negative (a row past the array's end takes its last delay). Returns each
-- row changed and its new status.
PREPARE fail (text, uuid[], bigint[], text, bigint, integer, bigint[]) AS
UPDATE outbox o SET
  status = CASE WHEN o.attempts >= $6 THEN 'FAILED' ELSE 'PENDING' END,
  owner = NULL, lease_until = NULL, last_error = $4,
  available_at = CASE WHEN o.attempts >= $6 THEN o.available_at
    ELSE COALESCE(outbox_ts($5), clock_timestamp())
         + $7[least(o.attempts, cardinality($7))]
           * interval '1 millisecond' END
FROM unnest($2, $3) AS l(event_id, epoch)
WHERE o.event_id = l.event_id AND o.lease_epoch = l.epoch AND o.owner = $1
  AND o.status = 'SENDING' AND outbox_require_leases($1, $2, $3, 'fail')
  AND outbox_require($6 >= 1, 'fail: max_attempts must be at least 1')
  AND outbox_require(cardinality($7) >= 1 AND array_position($7, NULL) IS NULL
                     AND 0 <= ALL ($7),
                     'fail: delays_ms must be non-empty, without NULL or '
                     'negative delays')
RETURNING o.event_id, o.status;

-- After a reconnect, when the answer to a claim was lost (the connection
-- broke after the claim may have committed): hands back every row still
-- leased to this owner that the relay does not know it holds ($2), with the
-- attempt refunded, so a database outage charges no attempt. Safe only
-- because an owner name belongs to one relay process (never reused by a
-- restart while the old process may live). Through outbox_unpublished (a
-- SENDING row is unpublished). $1 owner, $2 held event_ids
PREPARE release_unknown (text, uuid[]) AS
UPDATE outbox SET status = 'PENDING', owner = NULL, lease_until = NULL,
  attempts = greatest(attempts - 1, 0)
WHERE published_at IS NULL AND owner = $1 AND status = 'SENDING'
  AND NOT (event_id = ANY ($2))
  AND outbox_require(length($1) > 0 AND $2 IS NOT NULL
                     AND array_position($2, NULL) IS NULL,
                     'release_unknown: owner empty, or held ids NULL')
RETURNING event_id;
