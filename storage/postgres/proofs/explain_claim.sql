-- (c) one claim of 32 from the start of the key space: it walks the 500
-- blocked aggregates, then takes 32 claimable ones. In a transaction that
-- is rolled back, so every case claims the same rows. Custom plan first,
-- then the generic plan a prepared statement moves to after five runs.
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
EXECUTE claim('r1', NULL, 30000, 32, 1024, '', 5);
ROLLBACK;
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
EXECUTE claim('r1', NULL, 30000, 32, 1024, '', 5);
ROLLBACK;
