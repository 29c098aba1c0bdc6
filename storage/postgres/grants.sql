-- outbox on PostgreSQL: the least privileges of each part of the pipeline
-- (docs/deploy.md), printed by `outbox init --print-grants`. Run it as the
-- role that ran `outbox init` (it owns the tables), after init, in the
-- outbox database; then give each role a password (ALTER ROLE ... PASSWORD)
-- and a pg_hba.conf line. Running it again changes nothing.
--
--   outbox_writer    the application (and `outbox write`): places orders
--                    and appends events (outbox_append), nothing else
--   outbox_relay     `outbox relay`: leases, acknowledges and fails outbox
--                    rows; reads the counts its coordinator watches
--   outbox_consumer  `outbox consume`: its coordinator reads the counts;
--                    the consumers themselves touch only Redis
--
-- `init`, `purge`, `retry`, `verify`, `status`, `trim` and the dead-letter
-- commands run as the owner. No role here may change the schema, delete a
-- row, or rewrite a published event.

DO $$
DECLARE
  wanted text;
BEGIN
  FOREACH wanted IN ARRAY ARRAY['outbox_writer', 'outbox_relay',
                                'outbox_consumer'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = wanted) THEN
      EXECUTE format('CREATE ROLE %I LOGIN', wanted);
    END IF;
  END LOOP;
END $$;

-- Every part checks the schema version and the database's identity (the
-- Redis keyspace stamp) when it starts.
GRANT SELECT ON schema_version, database_identity
  TO outbox_writer, outbox_relay, outbox_consumer;

-- The writer: an order, its request key, its events. The seq trigger
-- (outbox_allocate_seq) upserts the aggregate's head under its lock; the
-- identity columns draw from their sequences.
GRANT SELECT, INSERT ON orders, outbox, request_keys TO outbox_writer;
GRANT SELECT, INSERT, UPDATE ON aggregate_heads TO outbox_writer;
GRANT USAGE ON SEQUENCE orders_id_seq, outbox_id_seq TO outbox_writer;

-- The seq trigger's helpers run as the owner (SECURITY DEFINER: they read
-- and give back seqs the writer may not see): the writer's alone, not
-- every role's, as PostgreSQL grants a new function by default.
REVOKE EXECUTE ON FUNCTION outbox_event_of(uuid), outbox_give_back_seq(text)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION outbox_event_of(uuid), outbox_give_back_seq(text)
  TO outbox_writer;

-- The relays: claim (SELECT ... FOR UPDATE), lease, renew, ack, release and
-- fail change a row's delivery state, never its event: those columns only.
GRANT SELECT ON outbox TO outbox_relay;
GRANT UPDATE (status, owner, lease_until, claimed_at, lease_epoch, attempts,
              available_at, last_error, published_at)
  ON outbox TO outbox_relay;

-- The relays' and the consumers' coordinators count orders and rows, and
-- a bounded run audits the stores as `outbox verify` does (reading the
-- aggregates' heads when the inbox names an event the first copy missed).
GRANT SELECT ON orders, aggregate_heads TO outbox_relay;
GRANT SELECT ON orders, outbox, aggregate_heads TO outbox_consumer;
