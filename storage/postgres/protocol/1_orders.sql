-- outbox on PostgreSQL: every statement the stores run, as PREPAREs
-- (docs/postgres-protocol.md), in the files of storage/postgres/protocol/
-- by their numbers: 1_orders, 2_claim, 3_leases, 4_views, 5_retention,
-- 6_reads. The C++ backend runs them as one text (the files joined in that
-- order, cmake/EmbedText.cmake), with one PQexec per connection, then calls
-- the statements by name (PQexecPrepared, text parameters); psql can load
-- them and EXECUTE the statements. Plain SQL only: no psql commands.
-- `outbox verify` adds audit.sql.
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
-- (the global order of the group commit, above); a key another
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
    cardinality($3) = ALL (ARRAY[cardinality($1), cardinality($2),
                                 cardinality($4), cardinality($5),
                                 cardinality($6)])
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
    cardinality($1) = ALL (ARRAY[cardinality($2), cardinality($3),
                                 cardinality($4), cardinality($5)])
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
