-- outbox on PostgreSQL: reads for trim, the lab and the identity (protocol/1_orders.sql
-- says what these files are and what every statement assumes).

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
