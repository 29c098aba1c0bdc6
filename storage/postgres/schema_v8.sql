-- outbox on PostgreSQL: schema version 7 -> 8 (docs/postgres-protocol.md).
--
-- `outbox init` runs this file after the earlier ones, in the same
-- transaction and under the same lock as schema.sql (see its header).
-- Version 8 gives events headers: a JSON object of string values stored
-- with the row (NULL for none) and carried in the queue entry, for
-- metadata that is not the event's data (W3C trace context, a tenant, a
-- correlation id). outbox_append takes them as its last argument and adds
-- a W3C traceparent (a trace of its own) unless they hold one.

-- Adding a nullable column rewrites no row. NOT VALID: every row there
-- holds NULL, so the check need not scan them; every new row is checked.
ALTER TABLE outbox ADD COLUMN headers json;
ALTER TABLE outbox ADD CONSTRAINT outbox_headers_object
  CHECK (headers IS NULL OR json_typeof(headers) = 'object') NOT VALID;

-- True for a W3C traceparent of version 00: 00-<32 hex>-<16 hex>-<2 hex>,
-- lower case, neither id all zeros (text/event_headers.cpp's is_traceparent).
CREATE FUNCTION outbox_is_traceparent(value text) RETURNS boolean
  LANGUAGE sql IMMUTABLE
  RETURN value ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
     AND substr(value, 4, 32) !~ '^0+$' AND substr(value, 37, 16) !~ '^0+$';

-- Why these headers may not be an event's, in the words of the C++
-- writers' check (text/event_headers.cpp); NULL when they may.
CREATE FUNCTION outbox_headers_problem(headers json) RETURNS text
  LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  name text;
  value json;
  names integer := 0;
BEGIN
  IF json_typeof(headers) IS DISTINCT FROM 'object' THEN
    RETURN format('headers must be a JSON object (got a JSON %s)',
                  json_typeof(headers));
  END IF;
  FOR name, value IN SELECT e.key, e.value FROM json_each(headers) e LOOP
    names := names + 1;
    IF octet_length(name) NOT BETWEEN 1 AND 128 THEN
      RETURN format('a header name must be 1 to 128 bytes (got %s)',
                    octet_length(name));
    END IF;
    IF name ~ '[\x01-\x1f\x7f\u0080-\u009f]' THEN
      RETURN 'header names must be UTF-8 text without control characters';
    END IF;
    IF json_typeof(value) <> 'string' THEN
      RETURN format('header %s must be a string (got a JSON %s)', name,
                    json_typeof(value));
    END IF;
    IF octet_length(value #>> '{}') > 4096 THEN
      RETURN format('header %s must be at most 4096 bytes (got %s)', name,
                    octet_length(value #>> '{}'));
    END IF;
    IF name = 'traceparent' AND NOT outbox_is_traceparent(value #>> '{}') THEN
      RETURN format('header traceparent must be a W3C traceparent '
                    '(00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all '
                    'zeros), not "%s"', left(value #>> '{}', 64));
    END IF;
  END LOOP;
  IF names > 64 THEN
    RETURN format('headers may hold at most 64 names (got %s)', names);
  END IF;
  RETURN NULL;
END
$$;

-- A new W3C traceparent: a trace of its own, sampled. gen_random_uuid()
-- has its version nibble set, so neither id can be all zeros.
CREATE FUNCTION outbox_new_traceparent() RETURNS text
  LANGUAGE sql VOLATILE
  RETURN '00-' || replace(gen_random_uuid()::text, '-', '') || '-'
      || left(replace(gen_random_uuid()::text, '-', ''), 16) || '-01';

-- The headers with a traceparent: as given when they hold one, else with a
-- new one added. Anything but an object is left to the trigger to name.
CREATE FUNCTION outbox_with_traceparent(headers json) RETURNS json
  LANGUAGE sql VOLATILE
  RETURN CASE
    WHEN headers IS NULL
      THEN json_build_object('traceparent', outbox_new_traceparent())
    WHEN json_typeof(headers) <> 'object' OR headers -> 'traceparent' IS NOT NULL
      THEN headers
    ELSE (headers::jsonb
          || jsonb_build_object('traceparent', outbox_new_traceparent()))::json
  END;

-- As in schema_v7.sql, and then: headers are checked on every insert,
-- from outbox_append or a plain INSERT, so that no consumer is handed
-- headers a writer would have refused.
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
  IF NEW.headers IS NOT NULL THEN
    problem := outbox_headers_problem(NEW.headers);
    IF problem IS NOT NULL THEN
      RAISE EXCEPTION USING ERRCODE = 'check_violation',
        MESSAGE = 'outbox: ' || problem,
        HINT = 'Headers are a JSON object of string values, or NULL.';
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

-- outbox_append and outbox_append_once take headers as their last
-- argument, defaulted: every call written for version 7 means the same.
-- A new argument is a new function to PostgreSQL, so the old ones go
-- (outbox_append first: its body calls outbox_append_once). Statements
-- other sessions prepared against them are planned again at their next
-- use, and find these.
DROP FUNCTION outbox_append(text, text, json, uuid, timestamptz);
DROP FUNCTION outbox_append_once(text, text, json, uuid, timestamptz);

-- As in schema_v7.sql, with headers (a traceparent added unless given).
CREATE FUNCTION outbox_append_once(aggregate_id text, event_type text,
                                   payload json,
                                   given_event_id uuid DEFAULT NULL,
                                   at timestamptz DEFAULT NULL,
                                   headers json DEFAULT NULL,
                                   OUT event_id uuid, OUT seq bigint,
                                   OUT replayed boolean)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_aggregate text;
  found_type text;
BEGIN
  INSERT INTO outbox AS o (event_id, aggregate_id, event_type, payload,
                           headers, created_at, available_at)
    VALUES (COALESCE(given_event_id, outbox_uuid_v7()),
            outbox_append_once.aggregate_id, outbox_append_once.event_type,
            outbox_append_once.payload,
            outbox_with_traceparent(outbox_append_once.headers),
            COALESCE(at, clock_timestamp()), COALESCE(at, clock_timestamp()))
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

-- Appends one event inside the caller's transaction (schema.sql), with
-- its headers:
--   SELECT * FROM outbox_append('order-42', 'OrderPaid', '{"amount": 5}',
--                               headers => '{"tenant": "acme"}');
CREATE FUNCTION outbox_append(aggregate_id text, event_type text,
                              payload json, given_event_id uuid DEFAULT NULL,
                              at timestamptz DEFAULT NULL,
                              headers json DEFAULT NULL,
                              OUT event_id uuid, OUT seq bigint)
  LANGUAGE sql VOLATILE
BEGIN ATOMIC
  SELECT a.event_id, a.seq
    FROM outbox_append_once(outbox_append.aggregate_id,
                            outbox_append.event_type, outbox_append.payload,
                            given_event_id, at, outbox_append.headers) AS a;
END;

UPDATE schema_version SET version = 8, migrated_at = clock_timestamp();
