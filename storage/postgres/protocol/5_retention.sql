-- outbox on PostgreSQL: retention's purge (protocol/1_orders.sql
-- says what these files are and what every statement assumes).

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
