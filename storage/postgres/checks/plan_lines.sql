-- What the plan checks of this folder share (run before each of them, in
-- the same PQexec or psql session): pg_temp.outbox_plan_lines(statement),
-- the lines of EXPLAIN (COSTS OFF) `statement` (an EXECUTE of a prepared
-- statement: planned, not run) under each plan cache mode, one row a line:
-- mode, k (1 force_custom_plan, 2 force_generic_plan: what a prepared
-- statement settles on after five runs), n (the line's number from 1) and
-- the line. The setting is put back after. pg_temp: the function goes with
-- the session.
CREATE OR REPLACE FUNCTION pg_temp.outbox_plan_lines(statement text)
  RETURNS TABLE (mode text, k bigint, n integer, line text)
  LANGUAGE plpgsql AS $$
DECLARE
  saved text := current_setting('plan_cache_mode');
BEGIN
  FOR mode, k IN
    SELECT m.mode, m.k
    FROM unnest(ARRAY['force_custom_plan', 'force_generic_plan'])
           WITH ORDINALITY AS m(mode, k)
  LOOP
    PERFORM set_config('plan_cache_mode', mode, true);
    n := 0;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || statement LOOP
      n := n + 1;
      RETURN NEXT;
    END LOOP;
  END LOOP;
  PERFORM set_config('plan_cache_mode', saved, true);
END
$$;
