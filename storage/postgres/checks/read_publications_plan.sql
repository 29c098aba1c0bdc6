-- read_publications' plans, for a test (run with one PQexec after
-- plan_lines.sql, on a connection where protocol/*.sql is prepared; no psql
-- commands). The last statement
-- returns one row per plan cache mode, force_custom_plan then
-- force_generic_plan (what a prepared statement settles on after five
-- runs): the plan of EXPLAIN EXECUTE read_publications(...) (not run) over
-- the first 1000 rows of the outbox, one trim page, and
--   probes_only: every scan of outbox and aggregate_heads is an index scan,
--     never a sequential or bitmap scan: each call reads one page of
--     events, and a scan of the table per page made a trim cost the
--     table's size times its pages.
-- The table must not be tiny: on a page or two a sequential scan is the
-- right plan (the test writes 50,000 rows and analyzes them).
WITH page AS (
  SELECT array_agg(p.event_id::text ORDER BY p.id) AS ids,
         array_agg(p.aggregate_id ORDER BY p.id) AS aggregates,
         array_agg(p.seq ORDER BY p.id) AS seqs
  FROM (SELECT id, event_id, aggregate_id, seq FROM outbox
        ORDER BY id LIMIT 1000) AS p),
plan AS (
  SELECT l.*
  FROM page CROSS JOIN LATERAL pg_temp.outbox_plan_lines(
    format('EXECUTE read_publications(%L, %L, %L)', page.ids,
           page.aggregates, page.seqs)) AS l)
SELECT mode,
       string_agg(line, E'\n' ORDER BY n) AS plan,
       COALESCE(bool_and(line ~ 'Index (Only )?Scan using \w+ on ')
                  FILTER (WHERE line ~ 'Scan.* on (outbox|aggregate_heads) '),
                false) AS probes_only
FROM plan GROUP BY mode, k ORDER BY k;
