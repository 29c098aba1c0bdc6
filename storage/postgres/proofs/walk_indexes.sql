-- (f) which index the walk can fall back on when outbox_unpublished is not
-- there (dropped in a transaction that is rolled back): with the schema's
-- unique index in text_pattern_ops, none (the walk cannot use it for > and
-- <=); with a unique index in the default operator class, as the first
-- schema had, that one, which holds the whole published history. Generic
-- plans, not run.
SET plan_cache_mode = force_generic_plan;
BEGIN;
DROP INDEX outbox_unpublished;
\echo WALK schema: unique (aggregate_id text_pattern_ops, seq)
EXPLAIN (COSTS OFF) EXECUTE claim('r1', NULL, 30000, 32, 1024, '', 5);
ROLLBACK;
BEGIN;
DROP INDEX outbox_unpublished;
DROP INDEX outbox_aggregate_seq;
CREATE UNIQUE INDEX outbox_aggregate_seq ON outbox (aggregate_id, seq);
\echo WALK the first schema: unique (aggregate_id, seq)
EXPLAIN (COSTS OFF) EXECUTE claim('r1', NULL, 30000, 32, 1024, '', 5);
ROLLBACK;
