-- outbox on PostgreSQL: schema version 6 -> 7 (docs/postgres-protocol.md).
--
-- `outbox init` runs this file after the earlier ones, in the same
-- transaction and under the same lock as schema.sql (see its header).
-- Version 7 makes an append idempotent on its event_id, so that a writer
-- that lost its COMMIT's answer, or any client retrying, can send the same
-- event again without making it twice, and without spending a seq:
-- - the seq trigger gives the seq back when the row it allocated for turns
--   out to exist already (INSERT ... ON CONFLICT (event_id) DO NOTHING used
--   to burn one: seqs 1, 3, and a false order violation ever after);
-- - outbox_append, given an event_id that exists, returns that row;
--   outbox_append_once says, besides, whether it did (replayed).
-- On SQLite version 7 changes nothing: the writer looks the event_id up in
-- its own write transaction (storage/sqlite/order_store.cpp).

-- As in schema.sql, and then: once the aggregate's head is locked (a
-- concurrent insert of the same event_id has committed or rolled back by
-- then), a row with this event_id means this insert will not happen (ON
-- CONFLICT DO NOTHING skips it; a plain INSERT fails on the primary key):
-- the head goes back to where it was and the row gets the existing seq,
-- which nothing stores. A statement in a plpgsql function takes a new
-- snapshot under READ COMMITTED, so the lookup sees what the lock waited
-- for. A head this insert created (last_seq 1) is removed instead.
CREATE OR REPLACE FUNCTION outbox_allocate_seq() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  existing bigint;
BEGIN
  IF NEW.seq IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'check_violation',
      MESSAGE = format('outbox: an insert may not choose its seq (%s for %s)',
                       NEW.seq, NEW.aggregate_id),
      HINT = 'Leave seq out (or use outbox_append): it is allocated under '
             'the aggregate''s lock.';
  END IF;
  INSERT INTO aggregate_heads AS h (aggregate_id, last_seq)
    VALUES (NEW.aggregate_id, 1)
  ON CONFLICT ON CONSTRAINT aggregate_heads_pkey
    DO UPDATE SET last_seq = h.last_seq + 1
  RETURNING h.last_seq INTO NEW.seq;
  IF NEW.event_id IS NOT NULL THEN
    SELECT o.seq INTO existing FROM outbox o WHERE o.event_id = NEW.event_id;
    IF FOUND THEN
      IF NEW.seq = 1 THEN
        DELETE FROM aggregate_heads h WHERE h.aggregate_id = NEW.aggregate_id;
      ELSE
        UPDATE aggregate_heads h SET last_seq = h.last_seq - 1
          WHERE h.aggregate_id = NEW.aggregate_id;
      END IF;
      NEW.seq := existing;
    END IF;
  END IF;
  RETURN NEW;
END
$$;

-- Appends one event, or finds it: given_event_id names an event that
-- exists already (a retry) -> that row, replayed = true, nothing written.
-- The same event_id with another aggregate or event type is refused
-- (23505): it names another event. The payload is not compared: one
-- event_id is one event, whatever a retry carries.
CREATE FUNCTION outbox_append_once(aggregate_id text, event_type text,
                                   payload json,
                                   given_event_id uuid DEFAULT NULL,
                                   at timestamptz DEFAULT NULL,
                                   OUT event_id uuid, OUT seq bigint,
                                   OUT replayed boolean)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_aggregate text;
  found_type text;
BEGIN
  INSERT INTO outbox AS o (event_id, aggregate_id, event_type, payload,
                           created_at, available_at)
    VALUES (COALESCE(given_event_id, outbox_uuid_v7()),
            outbox_append_once.aggregate_id, outbox_append_once.event_type,
            outbox_append_once.payload, COALESCE(at, clock_timestamp()),
            COALESCE(at, clock_timestamp()))
  ON CONFLICT ON CONSTRAINT outbox_pkey DO NOTHING
  RETURNING o.event_id, o.seq INTO outbox_append_once.event_id,
                                   outbox_append_once.seq;
  IF FOUND THEN
    replayed := false;
    RETURN;
  END IF;
  SELECT o.seq, o.aggregate_id, o.event_type
    INTO outbox_append_once.seq, found_aggregate, found_type
    FROM outbox o WHERE o.event_id = given_event_id;
  IF NOT FOUND THEN
    -- Deleted (a purge) between the conflict and this read.
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = format('outbox: event %s went while it was appended again',
                       given_event_id);
  END IF;
  IF found_aggregate <> outbox_append_once.aggregate_id
     OR found_type <> outbox_append_once.event_type THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation',
      MESSAGE = format('outbox: event_id %s already names %s of %s (seq %s),'
                       ' not %s of %s', given_event_id, found_type,
                       found_aggregate, outbox_append_once.seq,
                       outbox_append_once.event_type,
                       outbox_append_once.aggregate_id);
  END IF;
  event_id := given_event_id;
  replayed := true;
END
$$;

-- As before, now idempotent on given_event_id (outbox_append_once).
CREATE OR REPLACE FUNCTION outbox_append(aggregate_id text, event_type text,
                                         payload json,
                                         given_event_id uuid DEFAULT NULL,
                                         at timestamptz DEFAULT NULL,
                                         OUT event_id uuid, OUT seq bigint)
  LANGUAGE sql VOLATILE
BEGIN ATOMIC
  SELECT a.event_id, a.seq
    FROM outbox_append_once(outbox_append.aggregate_id,
                            outbox_append.event_type, outbox_append.payload,
                            given_event_id, at) AS a;
END;

UPDATE schema_version SET version = 7, migrated_at = clock_timestamp();
