-- The claim's plans, for a test (run with one PQexec after plan_lines.sql,
-- on a connection where protocol/*.sql is prepared; no psql commands). The last statement returns
-- one row per plan cache mode, force_custom_plan then force_generic_plan
-- (what a prepared statement settles on after five runs): the plan of
-- EXPLAIN EXECUTE claim(...) (not run: nothing is claimed), and
--   walk_on_unpublished: every table scan of the walk is an Index Scan
--     using outbox_unpublished (never the unique (aggregate_id, seq) index,
--     a bitmap or a sequential scan: those read the published history);
--   locks_by_id: locked and taken reach their rows through outbox_id_key;
--   no_seq_scan: no sequential scan of outbox anywhere;
--   run_indexes: the indexes the run step uses (for the log).
-- A test makes the statistics stale first (docs/postgres-protocol.md,
-- proof f: proofs/gen_stale.sql) and asserts the three booleans. The table
-- must not be tiny: on a table of a page or two a sequential scan is the
-- right plan, and locks_by_id and no_seq_scan are false (one row: false;
-- gen_stale.sql at 1/100 of its counts, 2000 rows analyzed and 225
-- unpublished since: all true).
WITH plan AS (
  SELECT * FROM pg_temp.outbox_plan_lines(
    'EXECUTE claim(''plan-check'', NULL, 30000, 32, 1024, '''', 5)')),
part AS (
  -- Each line under the CTE it belongs to (the last "CTE name" above it).
  SELECT p.*, (SELECT substring(q.line FROM '^\s*CTE (\w+)$') FROM plan q
               WHERE q.k = p.k AND q.n <= p.n AND q.line ~ '^\s*CTE \w+$'
               ORDER BY q.n DESC LIMIT 1) AS cte,
         p.line ~ 'Scan.* on outbox ' AS scans_outbox
  FROM plan p)
SELECT mode,
       string_agg(line, E'\n' ORDER BY n) AS plan,
       COALESCE(bool_and(line ~ 'Index Scan using outbox_unpublished ')
                  FILTER (WHERE cte = 'walk' AND scans_outbox), false)
         AS walk_on_unpublished,
       COALESCE(bool_and(line ~ 'Index Scan using outbox_id_key ')
                  FILTER (WHERE cte IN ('locked', 'taken') AND scans_outbox),
                false) AS locks_by_id,
       NOT bool_or(line ~ 'Seq Scan on outbox ') AS no_seq_scan,
       string_agg(DISTINCT substring(line FROM 'using (\w+)'), ',')
         FILTER (WHERE cte = 'run' AND scans_outbox) AS run_indexes
FROM part GROUP BY mode, k ORDER BY k;
