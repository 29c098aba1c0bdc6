-- outbox on PostgreSQL: schema version 5 -> 6 (docs/postgres-protocol.md).
--
-- `outbox init` runs this file after schema.sql on a new database, or alone
-- on one at version 5, in the same transaction and under the same lock as
-- schema.sql (see its header). Version 6 on SQLite rewrote a CHECK's text;
-- here it makes the event ids PostgreSQL itself makes (outbox_append
-- without given_event_id, a plain INSERT) version 7 UUIDs, like outbox's
-- writers (storage/event_ids.cpp): 48 bits of milliseconds since the epoch
-- first, then the version and variant bits, the rest random. New ids land
-- at the right edge of the event_id index instead of on a random page.

-- gen_random_uuid()'s 122 random bits, the first 48 replaced by the time
-- and the version nibble turned from 4 (0100) into 7 (0111): set_bit counts
-- from the least significant bit of the first byte, so bits 52 and 53 are
-- the low two bits of byte 6's high nibble. The variant bits stay.
CREATE FUNCTION outbox_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE
RETURN encode(
  set_bit(set_bit(
    overlay(uuid_send(gen_random_uuid())
            PLACING substring(int8send(floor(extract(epoch FROM
                      clock_timestamp()) * 1000)::bigint) FROM 3)
            FROM 1 FOR 6),
    52, 1), 53, 1),
  'hex')::uuid;

ALTER TABLE outbox ALTER COLUMN event_id SET DEFAULT outbox_uuid_v7();

-- As in schema.sql, with outbox_uuid_v7() for a new id.
CREATE OR REPLACE FUNCTION outbox_append(aggregate_id text, event_type text,
                                         payload json,
                                         given_event_id uuid DEFAULT NULL,
                                         at timestamptz DEFAULT NULL,
                                         OUT event_id uuid, OUT seq bigint)
  LANGUAGE sql VOLATILE
BEGIN ATOMIC
  INSERT INTO outbox (event_id, aggregate_id, event_type, payload,
                      created_at, available_at)
    VALUES (COALESCE(given_event_id, outbox_uuid_v7()),
            outbox_append.aggregate_id, outbox_append.event_type,
            outbox_append.payload, COALESCE(at, clock_timestamp()),
            COALESCE(at, clock_timestamp()))
  RETURNING outbox.event_id, outbox.seq;
END;

UPDATE schema_version SET version = 6, migrated_at = clock_timestamp();
