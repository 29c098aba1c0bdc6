-- outbox on PostgreSQL: the relays' claim (protocol/1_orders.sql
-- says what these files are and what every statement assumes).

------------------------------------------------------------------- claim --

-- One statement, one short transaction. Parameters:
-- $1 owner, $2 now_ms, $3 ttl_ms, $4 batch, $5 scan bound (aggregates
-- looked at, claim_scan_bound), $6 start after this aggregate_id ('' = the
-- first; the resume point the previous claim returned), $7 max_attempts.
--
-- walk: a loose index scan of outbox_unpublished, one probe per aggregate
-- with unpublished rows, from $6 on and round to the start once: each
-- probe returns the aggregate's head (its lowest unpublished seq, whatever
-- its status) and whether that head is claimable now (PENDING and due, or
-- SENDING with an expired lease). A head that is SENDING under a live
-- lease, not yet due, or FAILED blocks its aggregate: nothing behind it is
-- read. The walk stops after $4 claimable heads or $5 aggregates.
-- Each step is (next aggregate after the last) UNION ALL (the first
-- aggregate, to wrap round) under LIMIT 1: the wrap is taken only when the
-- first branch has no row. That rests on PostgreSQL's Append running its
-- children one after the other, in the order written, and Limit stopping
-- once it has its row (nodeAppend.c, nodeLimit.c): EXPLAIN ANALYZE of a
-- claim that wraps shows the second branch run once (loops=1), at the one
-- step where the first came back empty. The exceptions cannot
-- apply: a Parallel Append (the statement locks and writes rows, so it is
-- never planned in parallel) and a Merge Append (only for an ORDER BY above
-- the UNION ALL; there is none). Only the unique (aggregate_id
-- text_pattern_ops, seq) index and outbox_unpublished hold aggregate_id
-- first, and the walk's > / <= can use only the latter (schema.sql).
-- run: from each claimable head, its unpublished rows in seq order, as
-- long as they are claimable and none before was given up (at most $4 rows
-- in all).
-- locked: those rows locked FOR UPDATE SKIP LOCKED, looked up by id
-- (= ANY of an array: the id index whatever the statistics say; the
-- claimable test implies published_at IS NULL through the status CHECK, and
-- is not written out so that outbox_unpublished, which stale statistics
-- can show as empty, is never scanned whole instead). A row whose lock
-- another transaction holds is skipped. A row that another transaction
-- updated and committed after this statement's snapshot was taken is not
-- locked as the snapshot saw it: READ COMMITTED's EvalPlanQual step
-- follows the update chain to the newest version, evaluates this CTE's
-- WHERE again on that version alone (the claimable test: now SENDING under
-- a live lease, or PUBLISHED, it fails), and locks it only if it passes.
-- That recheck is per row: it does not redo the walk or the run, so it
-- cannot see that a lower row of the same aggregate was skipped, or taken
-- by a claim that committed meanwhile while this row stayed claimable.
-- chosen: hence this step, per aggregate over what was actually locked:
-- the locked rows that still form an unbroken run from the walk's head
-- (seq = head_seq + rank - 1): a head another claim holds or took drops its
-- whole aggregate, a skipped row cuts its run. Never the trap of
-- ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED (skip a locked head, take
-- the next): the head is chosen first, without locks, and only that row
-- may start a run.
-- A row already at max_attempts becomes FAILED instead of SENDING (and
-- ends its run: it blocks its aggregate).
-- Returns one row per claimed or given-up row (given_up), each repeating
-- the walk's summary (scanned, resume_after, lease_until); a claim that
-- takes nothing returns one row with only the summary (event_id NULL).
PREPARE claim (text, bigint, bigint, integer, integer, text, integer) AS
WITH RECURSIVE
t AS MATERIALIZED (
  SELECT COALESCE(outbox_ts($2), clock_timestamp()) AS now
  WHERE outbox_require(length($1) > 0, 'claim: owner is empty or NULL')
    AND outbox_require($3 > 0, 'claim: ttl_ms must be above 0')
    AND outbox_require($4 >= 1, 'claim: batch must be at least 1')
    AND outbox_require($5 >= 1, 'claim: scan bound must be at least 1')
    AND outbox_require($6 IS NOT NULL,
                       'claim: resume-after is NULL (the first claim: '''')')
    AND outbox_require($7 >= 1, 'claim: max_attempts must be at least 1')),
walk AS (
  SELECT 0 AS n, 0 AS found, $6::text COLLATE "C" AS aggregate_id,
         NULL::bigint AS seq, false AS ready, false AS wrapped
  UNION ALL
  SELECT w.n + 1, w.found + h.ready::integer, h.aggregate_id, h.seq,
         h.ready, h.wrapped
  FROM walk w CROSS JOIN t CROSS JOIN LATERAL (
    SELECT * FROM (
      (SELECT o.aggregate_id, o.seq, w.wrapped,
              (o.status = 'PENDING' AND o.available_at <= t.now)
              OR (o.status = 'SENDING' AND o.lease_until <= t.now) AS ready
       FROM outbox o
       WHERE o.published_at IS NULL AND o.aggregate_id > w.aggregate_id
         AND (NOT w.wrapped OR o.aggregate_id <= $6)
       ORDER BY o.aggregate_id, o.seq LIMIT 1)
      UNION ALL
      (SELECT o.aggregate_id, o.seq, true,
              (o.status = 'PENDING' AND o.available_at <= t.now)
              OR (o.status = 'SENDING' AND o.lease_until <= t.now)
       FROM outbox o
       WHERE NOT w.wrapped AND $6 <> '' AND o.published_at IS NULL
         AND o.aggregate_id <= $6
       ORDER BY o.aggregate_id, o.seq LIMIT 1)
    ) AS next LIMIT 1) AS h
  WHERE w.n < $5 AND w.found < $4),
summary AS (
  SELECT count(*) - 1 AS scanned,
         (SELECT aggregate_id FROM walk ORDER BY n DESC LIMIT 1)
           AS resume_after
  FROM walk),
run AS (
  SELECT h.n, h.seq AS head_seq, r.id
  FROM walk h CROSS JOIN t CROSS JOIN LATERAL (
    SELECT x.id FROM (
      SELECT o.id, o.seq,
             bool_and((o.status = 'PENDING' AND o.available_at <= t.now)
                      OR (o.status = 'SENDING' AND o.lease_until <= t.now))
               OVER w AS unbroken,
             coalesce(bool_or(o.attempts >= $7)
               OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
               false) AS after_give_up
      FROM outbox o
      WHERE o.aggregate_id = h.aggregate_id AND o.published_at IS NULL
        AND o.seq >= h.seq
      WINDOW w AS (ORDER BY o.seq)
      ORDER BY o.seq LIMIT $4) AS x
    WHERE x.unbroken AND NOT x.after_give_up) AS r
  WHERE h.ready
  LIMIT $4),
locked AS (
  SELECT o.id, o.aggregate_id, o.seq, o.status, o.owner, o.attempts
  FROM outbox o CROSS JOIN t
  WHERE o.id = ANY (ARRAY(SELECT id FROM run))
    AND ((o.status = 'PENDING' AND o.available_at <= t.now)
         OR (o.status = 'SENDING' AND o.lease_until <= t.now))
  FOR UPDATE OF o SKIP LOCKED),
chosen AS (
  SELECT * FROM (
    SELECT l.*, r.n, r.head_seq,
           row_number() OVER w AS k,
           coalesce(bool_or(l.attempts >= $7)
             OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
             false) AS after_give_up
    FROM locked l
    JOIN (SELECT id, min(n) AS n, min(head_seq) AS head_seq FROM run
          GROUP BY id) AS r USING (id)
    WINDOW w AS (PARTITION BY l.aggregate_id ORDER BY l.seq)) AS c
  WHERE c.seq = c.head_seq + c.k - 1 AND NOT c.after_give_up),
taken AS (
  UPDATE outbox o SET
    status = CASE WHEN c.attempts >= $7 THEN 'FAILED' ELSE 'SENDING' END,
    owner = CASE WHEN c.attempts >= $7 THEN NULL ELSE $1 END,
    lease_until = CASE WHEN c.attempts >= $7 THEN NULL
                       ELSE t.now + $3 * interval '1 millisecond' END,
    claimed_at = CASE WHEN c.attempts >= $7 THEN o.claimed_at ELSE t.now END,
    lease_epoch = o.lease_epoch + (c.attempts < $7)::integer,
    attempts = o.attempts + (c.attempts < $7)::integer,
    last_error = CASE
      WHEN c.attempts < $7 THEN o.last_error
      WHEN c.status = 'SENDING' THEN format(
        'lease expired %s times without an acknowledgement (max_attempts %s)',
        c.attempts, $7)
      ELSE format('gave up after %s attempts (max_attempts %s)', c.attempts,
                  $7) || coalesce('; last error: ' || nullif(o.last_error, ''),
                                  '') END
  FROM chosen c CROSS JOIN t
  WHERE o.id = c.id
  RETURNING c.n, o.id, o.event_id, o.aggregate_id, o.seq, o.event_type,
            o.payload, o.lease_epoch, o.attempts,
            outbox_ms(o.created_at) AS created_at,
            o.status = 'FAILED' AS given_up,
            c.status = 'SENDING' AND c.attempts < $7 AS taken_over,
            CASE WHEN c.status = 'SENDING' THEN c.owner END AS previous_owner,
            o.last_error, o.headers)
SELECT s.scanned, s.resume_after,
       outbox_ms((SELECT now FROM t) + $3 * interval '1 millisecond')
         AS lease_until,
       k.id, k.event_id, k.aggregate_id, k.seq, k.event_type, k.payload,
       k.lease_epoch, k.attempts, k.created_at, k.given_up, k.taken_over,
       k.previous_owner, k.last_error, k.headers
FROM summary s LEFT JOIN taken k ON true
ORDER BY k.n, k.seq;
