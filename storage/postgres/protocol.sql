-- outbox on PostgreSQL: every statement the stores run, as PREPAREs
-- (docs/postgres-protocol.md). The C++ backend runs this file as it is,
-- with one PQexec per connection, then calls the statements by name
-- (PQexecPrepared, text parameters); psql can load it and EXECUTE them.
-- Plain SQL only: no psql commands. `outbox verify` adds audit.sql.
--
-- Time parameters named now_ms are milliseconds since the epoch or NULL:
-- NULL means the database's clock_timestamp(), what production binds, so
-- leases, backoff and publish times follow one clock whatever host a relay
-- or writer runs on; the contract tests bind their own clock. Durations
-- (ttl_ms, delays) are milliseconds.
--
-- Every statement runs in READ COMMITTED, as one implicit transaction
-- unless marked otherwise. A parameter no statement can mean (an empty
-- delays array, a NULL resume point, arrays of different lengths, a batch
-- below 1) raises 22023 through outbox_require (schema.sql) instead of
-- quietly doing nothing. Relay statements (claim, ack, renew, release,
-- fail) may run with synchronous_commit = off (a lost ack republishes; the
-- inbox absorbs it); order statements never.

------------------------------------------------------------------ orders --

-- 1. A keyed order claims its request key first. A row back: the key is
-- ours, then run place_order_rows with its order_id and event_id. No row:
-- another transaction holds or committed the key (ON CONFLICT waited for it
-- to end); run find_request_key, which sees it (a new statement, a new
-- snapshot). If that finds nothing either (the holder rolled back, or a
-- purge removed the key), run place_order_key again. No unique violation
-- ever reaches the caller, and a batch of orders never needs a savepoint.
-- A group commit (several requests in one transaction) takes its locks in
-- one global order, so two group commits wait for each other at most one
-- way: first the request keys of the group in ascending byte order (C
-- collation, memcmp: what std::string's < gives), then the orders' rows
-- (new aggregates: no one else can wait on them), then the events sorted
-- by aggregate_id the same way (a stable sort: one aggregate's events keep
-- their order). The writer does each step for the whole group in one
-- statement (place_orders, then append_events, below), then one at a time
-- (place_order_key and find_request_key; append_event) the requests that
-- statement did not write: a key taken twice in one group (the second sees
-- the group's own key), or before. If a deadlock happens anyway (40P01:
-- another writer took the same keys or aggregates in another order; or a
-- purge removed a key this group found taken, another group took it, and
-- waits for a later key of this one), PostgreSQL has rolled the whole
-- transaction back: the caller retries the whole group, as for 40001.
-- $1 request_id, $2 fingerprint, $3 now_ms, $4 event_id (the writer's
-- own, a version 7 uuid; NULL: the database makes one, version 7 too)
PREPARE place_order_key (text, text, bigint, uuid) AS
INSERT INTO request_keys (request_id, fingerprint, order_id, event_id,
                          created_at)
VALUES ($1, $2, nextval('orders_id_seq'), COALESCE($4, outbox_uuid_v7()),
        COALESCE(outbox_ts($3), clock_timestamp()))
ON CONFLICT (request_id) DO NOTHING
RETURNING order_id, event_id;

-- $1 request_id -> the original request: same fingerprint = replayed,
-- another = conflict.
PREPARE find_request_key (text) AS
SELECT fingerprint, order_id, event_id FROM request_keys
WHERE request_id = $1
  AND outbox_require($1 IS NOT NULL, 'find_request_key: request_id is NULL');

-- 2. The order and its OrderPlaced row. $1 order_id (NULL: a new one, for
-- an order without a request key), $2 sku, $3 qty, $4 event_id (NULL: a new
-- one), $5 now_ms, $6 headers (a JSON object, or NULL). The payload is
-- the text SQLite's writer makes ({"order_id":N,"sku":"S","qty":Q},
-- to_json escapes like nlohmann).
PREPARE place_order_rows (bigint, text, bigint, uuid, bigint, json) AS
WITH t AS MATERIALIZED (
  SELECT COALESCE(outbox_ts($5), clock_timestamp()) AS now),
o AS (
  INSERT INTO orders (id, sku, qty, created_at)
  SELECT COALESCE($1, nextval('orders_id_seq')), $2, $3, t.now FROM t
  RETURNING id, created_at)
SELECT o.id AS order_id, 'order-' || o.id AS aggregate_id, a.event_id, a.seq
FROM o CROSS JOIN LATERAL outbox_append(
  'order-' || o.id, 'OrderPlaced',
  format('{"order_id":%s,"sku":%s,"qty":%s}', o.id, to_json($2::text),
         $3)::json,
  $4, CASE WHEN $5 IS NULL THEN NULL ELSE o.created_at END, $6) AS a;

-- A group of orders in one statement (one round trip, where the steps
-- above take two per order): the same rows, locks and order as
-- place_order_key and place_order_rows run for each request in turn.
-- $1 request_ids (a NULL element: an order without a key), $2 their
-- fingerprints, $3 skus, $4 qtys, $5 event_ids (the writer's own, one per
-- request, all different), $6 headers (JSON objects, or NULL), $7 now_ms.
-- Request keys are inserted first, in ascending byte order of request_id
-- (the global order of protocol.sql's group commit); a key another
-- transaction holds is waited for, as ON CONFLICT does. A request writes
-- its order and event only when its own key went in (matched by its
-- event_id: a key given twice in the group goes in once) or it has none.
-- Returns one row per request that wrote, by its position (n, from 1);
-- for each other request the caller runs place_order_key /
-- find_request_key as above (replayed, conflict, or a holder that rolled
-- back). Events are inserted in the requests' order (the orders' rows
-- too, but PostgreSQL may run that step last: nothing reads it).
PREPARE place_orders (text[], text[], text[], bigint[], uuid[], json[],
                      bigint) AS
WITH t AS MATERIALIZED (
  SELECT COALESCE(outbox_ts($7), clock_timestamp()) AS now
  WHERE outbox_require(
    cardinality($1) = cardinality($3) AND cardinality($2) = cardinality($3)
      AND cardinality($4) = cardinality($3)
      AND cardinality($5) = cardinality($3)
      AND cardinality($6) = cardinality($3)
      AND array_position($5, NULL) IS NULL,
    'place_orders: the arrays differ in length, or an event_id is NULL')),
r AS MATERIALIZED (
  SELECT * FROM unnest($1, $2, $3, $4, $5, $6) WITH ORDINALITY
    AS r(request_id, fingerprint, sku, qty, event_id, headers, n)),
k AS (
  INSERT INTO request_keys (request_id, fingerprint, order_id, event_id,
                            created_at)
  SELECT r.request_id, r.fingerprint, nextval('orders_id_seq'), r.event_id,
         t.now
  FROM r CROSS JOIN t WHERE r.request_id IS NOT NULL
  ORDER BY r.request_id COLLATE "C", r.n
  ON CONFLICT (request_id) DO NOTHING
  RETURNING order_id, event_id),
w AS MATERIALIZED (
  SELECT r.n, COALESCE(k.order_id, nextval('orders_id_seq')) AS order_id,
         r.sku, r.qty, r.event_id, r.headers
  FROM r LEFT JOIN k ON k.event_id = r.event_id
  WHERE r.request_id IS NULL OR k.event_id IS NOT NULL
  ORDER BY r.n),
o AS (
  INSERT INTO orders (id, sku, qty, created_at)
  SELECT w.order_id, w.sku, w.qty, t.now FROM w CROSS JOIN t ORDER BY w.n),
e AS (
  INSERT INTO outbox (event_id, aggregate_id, event_type, payload, headers,
                      created_at, available_at)
  SELECT w.event_id, 'order-' || w.order_id, 'OrderPlaced',
         format('{"order_id":%s,"sku":%s,"qty":%s}', w.order_id,
                to_json(w.sku), w.qty)::json,
         outbox_with_traceparent(w.headers), t.now, t.now
  FROM w CROSS JOIN t ORDER BY w.n
  RETURNING event_id, aggregate_id, seq)
SELECT w.n, w.order_id, e.aggregate_id, e.event_id, e.seq
FROM w JOIN e USING (event_id) ORDER BY w.n;

-- After a connection lost in COMMIT: whether an event the writer appended
-- (with an event_id it made itself) was committed. A keyed order asks
-- find_request_key instead. (pg_xact_status is no answer: after a crash an
-- xid that never reached the WAL reads as "in the future", and may be
-- handed out again.) $1 event_id
PREPARE event_exists (uuid) AS
SELECT status FROM outbox WHERE event_id = $1
  AND outbox_require($1 IS NOT NULL, 'event_exists: event_id is NULL');

-- append_event: $1 aggregate_id, $2 event_type, $3 payload, $4 event_id
-- (made by the writer, as on SQLite, and sent again by its retries; NULL:
-- the database makes one), $5 now_ms, $6 headers (a JSON object, or
-- NULL). An event_id that exists returns its row with replayed = true and
-- writes nothing (schema_v7.sql). In FROM: `SELECT
-- (outbox_append_once(...)).*` would call it once per column.
PREPARE append_event (text, text, json, uuid, bigint, json) AS
SELECT event_id, seq, replayed
  FROM outbox_append_once($1, $2, $3, $4, outbox_ts($5), $6);

-- A group of events in one statement, as append_event for each in turn:
-- $1 aggregate_ids, $2 event_types, $3 payloads, $4 event_ids (none NULL),
-- $5 headers (JSON objects, or NULL), $6 now_ms; inserted in the arrays'
-- order, which the caller sorts by aggregate_id (its locking order; one
-- aggregate's events in their order). Returns one row per event it wrote,
-- by its position (n, from 1): an event_id that exists already (a retry),
-- or that the group gives twice (the second), writes nothing here and
-- spends no seq (the seq trigger gives it back); the caller then runs
-- append_event for it, which answers replayed or names the clash.
PREPARE append_events (text[], text[], json[], uuid[], json[], bigint) AS
WITH t AS MATERIALIZED (
  SELECT COALESCE(outbox_ts($6), clock_timestamp()) AS now
  WHERE outbox_require(
    cardinality($2) = cardinality($1) AND cardinality($3) = cardinality($1)
      AND cardinality($4) = cardinality($1)
      AND cardinality($5) = cardinality($1)
      AND array_position($4, NULL) IS NULL,
    'append_events: the arrays differ in length, or an event_id is NULL')),
r AS MATERIALIZED (
  SELECT * FROM unnest($1, $2, $3, $4, $5) WITH ORDINALITY
    AS r(aggregate_id, event_type, payload, event_id, headers, n)),
e AS (
  INSERT INTO outbox AS o (event_id, aggregate_id, event_type, payload,
                           headers, created_at, available_at)
  SELECT r.event_id, r.aggregate_id, r.event_type, r.payload,
         outbox_with_traceparent(r.headers), t.now, t.now
  FROM r CROSS JOIN t ORDER BY r.n
  ON CONFLICT ON CONSTRAINT outbox_pkey DO NOTHING
  RETURNING o.event_id, o.seq)
SELECT DISTINCT ON (e.event_id) r.n, e.event_id, e.seq
FROM r JOIN e USING (event_id) ORDER BY e.event_id, r.n;

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

------------------------------------------------------------------ views --

-- FAILED -> PENDING, attempts reset, due now. $1 event_ids, $2 now_ms.
-- Returns the ids retried; the others were not FAILED rows.
PREPARE retry (uuid[], bigint) AS
UPDATE outbox SET status = 'PENDING', attempts = 0, lease_until = NULL,
  available_at = COALESCE(outbox_ts($2), clock_timestamp())
WHERE event_id = ANY ($1) AND status = 'FAILED'
  AND outbox_require($1 IS NOT NULL, 'retry: event_ids is NULL')
RETURNING event_id;

-- $1 now_ms. Through outbox_unpublished (a FAILED row is unpublished):
-- its cost follows the backlog, not the history. Returns the count.
PREPARE retry_all_failed (bigint) AS
WITH r AS (
  UPDATE outbox SET status = 'PENDING', attempts = 0, lease_until = NULL,
    available_at = COALESCE(outbox_ts($1), clock_timestamp())
  WHERE published_at IS NULL AND status = 'FAILED' RETURNING 1)
SELECT count(*) FROM r;

-- stats: run the three in one REPEATABLE READ READ ONLY transaction (one
-- snapshot, no lock). Counts of the unpublished statuses come from
-- outbox_unpublished (bounded by the backlog); PUBLISHED is exact, an
-- index-only scan of outbox_id_key (grows with the history: `outbox
-- status` pays it, the relays never do). $1 now_ms
PREPARE stats_counts (bigint) AS
WITH t AS MATERIALIZED (SELECT COALESCE(outbox_ts($1), clock_timestamp()) AS now),
u AS (
  SELECT count(*) FILTER (WHERE status = 'PENDING') AS pending,
         count(*) FILTER (WHERE status = 'SENDING') AS sending,
         count(*) FILTER (WHERE status = 'FAILED') AS failed,
         min(created_at) FILTER (WHERE status IN ('PENDING', 'SENDING'))
           AS oldest,
         count(*) FILTER (WHERE status = 'SENDING' AND lease_until <= t.now)
           AS expired
  FROM outbox CROSS JOIN t WHERE published_at IS NULL)
SELECT u.pending, u.sending, u.failed,
       (SELECT count(*) FROM outbox WHERE published_at IS NOT NULL)
         AS published,
       (SELECT count(*) FROM orders) AS orders,
       greatest(outbox_ms(t.now) - outbox_ms(u.oldest), 0) AS oldest_age,
       u.expired
FROM u CROSS JOIN t;

-- Through outbox_unpublished (its predicate is implied; the ORDER BY is
-- its order, so a scan of the table, which would walk the published
-- history first, is never the cheaper plan): the first row PENDING or
-- SENDING ends the scan; only FAILED rows are stepped over.
PREPARE pending_or_sending AS
SELECT EXISTS (SELECT 1 FROM outbox
               WHERE published_at IS NULL
                 AND status IN ('PENDING', 'SENDING')
               ORDER BY aggregate_id, seq LIMIT 1);

-- The change mark of a bounded run's stall rule, in constant time (where
-- stats_counts reads the backlog and the history): the outbox's rows
-- inserted, updated and deleted since the statistics were last reset, as
-- PostgreSQL's cumulative statistics count them (pg_stat_user_tables). It
-- moves with every change, committed or rolled back, once the backend
-- that made it has flushed its counts (pgstat_report_stat): when it goes
-- idle, at most once a second; what it changed within that second waits
-- for its next statement or, idle, up to 10 s. Late only delays a stall's
-- verdict. A claim that takes nothing changes no row. NULL when
-- track_counts is off, where the counters stand still: the run counts.
PREPARE change_mark AS
SELECT CASE WHEN current_setting('track_counts')::boolean THEN
         pg_stat_get_tuples_inserted(t.rel) + pg_stat_get_tuples_updated(t.rel)
         + pg_stat_get_tuples_deleted(t.rel) END
FROM (SELECT 'outbox'::regclass::oid AS rel) AS t;

-- Through outbox_unpublished (a SENDING row is unpublished).
PREPARE leases_by_owner AS
SELECT owner, count(*), outbox_ms(min(lease_until)),
       outbox_ms(max(lease_until)), outbox_ms(max(claimed_at))
FROM outbox WHERE published_at IS NULL AND status = 'SENDING'
GROUP BY owner ORDER BY owner;

-- A page of FAILED rows after id $1, at most $2 (stats: 0 and 100).
-- The FAILED rows are found through outbox_unpublished, then sorted: no
-- index names status (schema_v9.sql: a claim would then never be a HOT
-- update), and the ORDER BY id sits outside the MATERIALIZED step so that
-- it cannot pull the scan onto outbox_id_key, which walks the history.
PREPARE failed_page (bigint, integer) AS
WITH failed AS MATERIALIZED (
  SELECT id, event_id, aggregate_id, seq, event_type, attempts,
         COALESCE(last_error, '') AS last_error,
         COALESCE(headers::text, '') AS headers
  FROM outbox WHERE published_at IS NULL AND status = 'FAILED' AND id > $1
    AND outbox_require($1 IS NOT NULL AND $2 >= 1,
                       'failed_page: after NULL or limit below 1'))
SELECT * FROM failed ORDER BY id LIMIT $2;

--------------------------------------------------------------- retention --

-- One purge batch, one statement: walks at most $3 rows (purge_scan_bound)
-- in id order after $1 and deletes up to $2 PUBLISHED rows published before
-- $4 (cutoff_ms), with their request keys. A row goes only with every lower
-- seq of its aggregate: seqs are gap-free and purge removes prefixes, so the
-- rows left of an aggregate are min_seq..last; a row at seq s goes when the
-- batch also takes the s - min_seq rows below it. aggregate_heads keeps
-- every aggregate's last seq already, so nothing else is written. A row
-- created at or after the cutoff ends the purge (done), as on SQLite.
-- Ids need not follow seqs within an aggregate (a writer that took its id
-- first may wait for the aggregate's lock and get the later seq), so the
-- LIMIT, which keeps the lowest ids, can cut a prefix short: the rule is
-- applied again to what it kept. The rows it cut come in the next batch;
-- a row kept without its lower seq waits for a later run (as SQLite's
-- walk leaves a row whose lower seq comes later in rowid order).
-- Returns deleted, request_keys, newest (rows that were their aggregate's
-- last), last_id (start the next batch after it) and done.
PREPARE purge (bigint, integer, integer, bigint) AS
WITH w AS (
  SELECT id, event_id, aggregate_id, seq, status, published_at, created_at
  FROM outbox WHERE id > $1
    AND outbox_require($1 IS NOT NULL AND $2 >= 1 AND $3 >= $2
                       AND $4 IS NOT NULL,
                       'purge: after_id or cutoff NULL, limit below 1, or '
                       'bound below limit')
  ORDER BY id LIMIT $3),
stop AS (SELECT min(id) AS id FROM w WHERE created_at >= outbox_ts($4)),
candidates AS (
  SELECT w.*, count(*) OVER (PARTITION BY aggregate_id ORDER BY seq) - 1
                AS below
  FROM w
  WHERE w.status = 'PUBLISHED' AND w.published_at < outbox_ts($4)
    AND w.id < COALESCE((SELECT id FROM stop), 9223372036854775807)),
prefixes AS (
  SELECT c.id, c.event_id, c.aggregate_id, c.seq, m.seq AS first_seq,
         c.seq = h.last_seq AS newest
  FROM candidates c
  CROSS JOIN LATERAL (SELECT min(seq) AS seq FROM outbox x
                      WHERE x.aggregate_id = c.aggregate_id) m
  JOIN aggregate_heads h ON h.aggregate_id = c.aggregate_id
  WHERE c.below = c.seq - m.seq
  ORDER BY c.id LIMIT $2),
doomed AS (
  SELECT id, event_id, newest
  FROM (SELECT p.*, count(*) OVER (PARTITION BY aggregate_id ORDER BY seq)
                      - 1 AS kept_below
        FROM prefixes p) p
  WHERE kept_below = seq - first_seq),
keys AS (
  DELETE FROM request_keys k USING doomed d WHERE k.event_id = d.event_id
  RETURNING 1),
gone AS (
  DELETE FROM outbox o USING doomed d
  WHERE o.id = d.id AND o.status = 'PUBLISHED'
  RETURNING o.id, d.newest)
SELECT (SELECT count(*) FROM gone) AS deleted,
       (SELECT count(*) FROM keys) AS request_keys,
       (SELECT count(*) FROM gone WHERE newest) AS newest,
       CASE WHEN (SELECT count(*) FROM prefixes) >= $2
            THEN (SELECT max(id) FROM prefixes)
            ELSE COALESCE((SELECT id - 1 FROM stop), (SELECT max(id) FROM w),
                          $1) END AS last_id,
       (SELECT count(*) FROM prefixes) < $2
         AND ((SELECT id FROM stop) IS NOT NULL
              OR (SELECT count(*) FROM w) < $3) AS done;

------------------------------------------------------------------- trim --

-- storage::database::read_publications: where each applied event stands,
-- in one statement (one snapshot). $1 event_ids as text (a dedup record's
-- id may not be a uuid at all: such an id finds no row), $2 aggregate_ids,
-- $3 seqs, one element per event. One row per event, in the order given
-- (ord from 1): state 'present' (with status, and published_at in ms or
-- NULL), 'purged' (the aggregate's remaining rows all have higher seqs, or
-- none remain and aggregate_heads covers the seq: purge removes prefixes
-- and never writes the head), or 'unknown'. The rule of
-- storage/sqlite/ledger.cpp, where a missing row whose aggregate has rows
-- at or below its seq is unknown, not purged. Each lookup is a LATERAL
-- subquery with a LIMIT, which the planner cannot flatten into a join, so
-- each is an index probe (pkey, the unique (aggregate_id, seq) index,
-- aggregate_heads_pkey) whatever the statistics say: without the LIMIT the
-- row lookup became a hash join over a sequential scan of the whole outbox
-- on every call. The aggregate's lowest seq and head are probed only for
-- an event without a row (o.status IS NULL, a one-time filter).
PREPARE read_publications (text[], text[], bigint[]) AS
SELECT e.ord,
       CASE WHEN o.status IS NOT NULL THEN 'present'
            WHEN m.seq IS NOT NULL
              THEN CASE WHEN e.seq < m.seq THEN 'purged' ELSE 'unknown' END
            WHEN e.seq <= h.last_seq THEN 'purged'
            ELSE 'unknown' END AS state,
       o.status, outbox_ms(o.published_at) AS published_at
FROM unnest($1, $2, $3) WITH ORDINALITY AS e(event_id, aggregate_id, seq, ord)
LEFT JOIN LATERAL (
  SELECT x.status, x.published_at FROM outbox x
  WHERE x.event_id = CASE WHEN e.event_id ~
          '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
          THEN e.event_id::uuid END
  LIMIT 1) AS o ON true
LEFT JOIN LATERAL (
  SELECT x.seq FROM outbox x
  WHERE o.status IS NULL AND x.aggregate_id = e.aggregate_id
  ORDER BY x.seq LIMIT 1) AS m ON true
LEFT JOIN LATERAL (
  SELECT x.last_seq FROM aggregate_heads x
  WHERE o.status IS NULL AND x.aggregate_id = e.aggregate_id
  LIMIT 1) AS h ON true
WHERE outbox_require(cardinality($1) = cardinality($2)
                     AND cardinality($1) = cardinality($3),
                     'read_publications: the three arrays differ in length')
ORDER BY e.ord;

-------------------------------------------------------------------- lab --

-- storage/lab_rows.hpp: the report's row counts, and one aggregate's rows
-- for the order check ($1 aggregate_id).
PREPARE table_counts AS
SELECT (SELECT count(*) FROM orders) AS orders,
       (SELECT count(*) FROM outbox) AS outbox;

PREPARE aggregate_rows (text) AS
SELECT seq, outbox_ms(created_at) AS created_at FROM outbox
WHERE aggregate_id = $1 ORDER BY seq;

---------------------------------------------------------------- identity --

PREPARE schema_version AS
SELECT version FROM schema_version;

PREPARE database_identity AS
SELECT id, first_schema FROM database_identity;
