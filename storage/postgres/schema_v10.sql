-- outbox on PostgreSQL: schema version 9 -> 10 (docs/postgres-protocol.md).
--
-- `outbox init` runs this file after the earlier ones, in the same
-- transaction and under the same lock as schema.sql (see its header).
--
-- claimed_at: when a row was last claimed, the claim's `now` (the clock its
-- lease_until is counted from). `outbox status` reads a lease's claim time
-- here instead of inferring it from lease_until and lease.ttl_ms, which may
-- have changed since the claim. NULL for a row never claimed, or claimed
-- before this version. Adding a nullable column without a default rewrites
-- no row.
--
-- No index names it, nor may one: the claim sets it, and a column an index
-- names forbids a HOT update when it changes (schema_v9.sql).
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS claimed_at timestamptz;

-- The relays set it with each claim: where grants.sql gave the relay role
-- its columns already, it gets this one too, or its claims would be
-- refused once this binary runs.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    GRANT UPDATE (claimed_at) ON outbox TO outbox_relay;
  END IF;
END $$;

UPDATE schema_version SET version = 10, migrated_at = clock_timestamp();
