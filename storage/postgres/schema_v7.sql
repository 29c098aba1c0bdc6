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

-- Why the consumers would refuse an OrderPlaced with this payload, in
-- their words (broker/lua/inbox_entry.lua; storage/order_rules.cpp checks the
-- same for outbox's own writers); NULL when they would take it. Refused at
-- write time, such an event never reaches the dead letters.
CREATE FUNCTION outbox_order_placed_problem(payload json) RETURNS text
  LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  qty numeric;
BEGIN
  IF json_typeof(payload -> 'sku') IS DISTINCT FROM 'string'
     OR payload ->> 'sku' = '' THEN
    RETURN 'payload.sku must be a non-empty string';
  END IF;
  IF payload ->> 'sku' ~ '[\x01-\x1f\x7f]' THEN
    RETURN 'payload.sku must be UTF-8 text without control characters';
  END IF;
  IF json_typeof(payload -> 'qty') IS DISTINCT FROM 'number' THEN
    RETURN 'payload.qty must be an integer >= 1 (at most 2^53)';
  END IF;
  qty := (payload ->> 'qty')::numeric;
  IF qty < 1 OR qty > 9007199254740992 OR qty <> trunc(qty) THEN
    RETURN 'payload.qty must be an integer >= 1 (at most 2^53)';
  END IF;
  RETURN NULL;
END
$$;

-- The row an event_id names, for the trigger and outbox_append_once: as
-- the schema's owner, so that a writer role keeps needing only INSERT on
-- outbox (and SELECT, INSERT, UPDATE on aggregate_heads), never SELECT on
-- the whole outbox. VOLATILE: each call reads with a fresh snapshot, which
-- sees what the head's lock waited for. NULLs when there is none.
CREATE FUNCTION outbox_event_of(wanted uuid, OUT seq bigint,
                                OUT aggregate_id text, OUT event_type text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT o.seq, o.aggregate_id, o.event_type FROM outbox o
    WHERE o.event_id = $1
$$;

-- Gives back the seq an insert allocated for a row that exists already:
-- the head goes back one, or goes when this insert created it (last_seq
-- is at least 1). As the owner, for the same reason as outbox_event_of.
CREATE FUNCTION outbox_give_back_seq(aggregate text) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path FROM CURRENT
  AS $$
BEGIN
  UPDATE aggregate_heads h SET last_seq = h.last_seq - 1
    WHERE h.aggregate_id = aggregate AND h.last_seq > 1;
  IF NOT FOUND THEN
    DELETE FROM aggregate_heads h WHERE h.aggregate_id = aggregate;
  END IF;
END
$$;

-- As in schema.sql, and then: once the aggregate's head is locked (a
-- concurrent insert of the same event_id has committed or rolled back by
-- then), a row with this event_id means this insert will not happen (ON
-- CONFLICT DO NOTHING skips it; a plain INSERT fails on the primary key):
-- the head goes back to where it was and the row gets the existing seq,
-- which nothing stores. Under READ COMMITTED the lookup (a volatile
-- function) takes a new snapshot, so it sees what the lock waited for.
-- (Only within one aggregate: a client inserting one event_id into two
-- aggregates at once may still spend a seq of the second.)
CREATE OR REPLACE FUNCTION outbox_allocate_seq() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  existing bigint;
  problem text;
BEGIN
  IF NEW.event_type = 'OrderPlaced' THEN
    problem := outbox_order_placed_problem(NEW.payload);
    IF problem IS NOT NULL THEN
      RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = 'outbox: an OrderPlaced the consumers would refuse: '
                  || problem,
        HINT = 'OrderPlaced needs payload.sku (text) and payload.qty '
               '(an integer >= 1): the consumers reserve qty of sku.';
    END IF;
  END IF;
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
    existing := (outbox_event_of(NEW.event_id)).seq;
    IF existing IS NOT NULL THEN
      PERFORM outbox_give_back_seq(NEW.aggregate_id);
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
  SELECT f.seq, f.aggregate_id, f.event_type
    INTO outbox_append_once.seq, found_aggregate, found_type
    FROM outbox_event_of(given_event_id) f;
  IF outbox_append_once.seq IS NULL THEN
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
