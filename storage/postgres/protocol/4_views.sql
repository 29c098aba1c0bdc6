-- outbox on PostgreSQL: what the views and operators read and retry (protocol/1_orders.sql
-- says what these files are and what every statement assumes).

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
