-- outbox on PostgreSQL: what `outbox verify` reads (audit/audit_tables.hpp),
-- run once with one PQexec on the audit's own connection, after
-- protocol/*.sql (docs/postgres-protocol.md, "Audit").
--
-- The conservation checks stay where they are: SQL over the SQLite scratch
-- tables of audit_tables (a private temporary SQLite file on the auditing
-- host, on disk beyond its small cache). PostgreSQL's part is the two
-- snapshots evaluate() compares, each taken by ONE statement into a
-- temporary table of this session (server side, on disk beyond
-- temp_buffers), then read out in keyset pages into the scratch tables:
--   1. audit_copy_ledger: the whole outbox, as the ledger (later = false).
--   2. only when the inbox names events the ledger lacks:
--      audit_forget_later (between two rounds), then audit_copy_later: the
--      rows the ledger lacks (later = true) and aggregate_heads, in one
--      statement, so one snapshot (a purge that deleted an aggregate's last
--      row is seen with the head it kept).
--   audit_ledger_page and audit_heads_page page them out.
-- A snapshot lasts one statement, not the whole read-out: a long audit does
-- not hold back vacuum (and with it the claim's cost, which grows with the
-- dead entries of outbox_unpublished) while the client pages. Memory: a
-- page on the client, temp_buffers on the server.
-- Needs TEMP on the database (PUBLIC has it by default) and SELECT on
-- outbox and aggregate_heads; the writes go to temporary tables only, so a
-- READ ONLY transaction default is fine. Not on a hot standby (no
-- temporary tables there): audit the primary.

CREATE TEMP TABLE audit_ledger (
  ord bigint PRIMARY KEY,      -- outbox.id: SQLite's rowid order
  event_id uuid NOT NULL,
  aggregate_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  event_type text NOT NULL,
  status text NOT NULL,
  sku text NOT NULL,
  qty bigint NOT NULL,
  published_at bigint NOT NULL,  -- ms, 0 when not PUBLISHED
  later boolean NOT NULL);
CREATE UNIQUE INDEX audit_ledger_event ON audit_ledger (event_id);

CREATE TEMP TABLE audit_heads (
  aggregate_id text COLLATE "C" PRIMARY KEY,
  last_seq bigint NOT NULL);

-- The ledger's columns from an outbox row, as audit_tables.cpp's copy_rows
-- makes them on SQLite: for OrderPlaced, the payload's sku as text ('' when
-- absent or null) and its qty as an integer (a number truncated, a string's
-- leading digits, true 1, anything else 0). Payloads outbox writes read the
-- same on both; others may differ (SQLite takes a duplicated key's first
-- value, PostgreSQL's json its last).
CREATE FUNCTION pg_temp.audit_sku(event_type text, payload json)
  RETURNS text LANGUAGE sql IMMUTABLE
  RETURN CASE WHEN event_type <> 'OrderPlaced' THEN ''
              WHEN json_typeof(payload -> 'sku') = 'boolean'
                THEN CASE WHEN (payload ->> 'sku')::boolean THEN '1'
                          ELSE '0' END
              ELSE COALESCE(payload ->> 'sku', '') END;

CREATE FUNCTION pg_temp.audit_qty(event_type text, payload json)
  RETURNS bigint LANGUAGE sql IMMUTABLE
  RETURN CASE
    WHEN event_type <> 'OrderPlaced' THEN 0
    WHEN json_typeof(payload -> 'qty') = 'number'
      THEN least(greatest(trunc((payload ->> 'qty')::numeric),
                          -9223372036854775808), 9223372036854775807)::bigint
    WHEN json_typeof(payload -> 'qty') = 'string'
      THEN COALESCE(least(greatest(substring(payload ->> 'qty'
                                             FROM '^\s*([+-]?[0-9]+)')::numeric,
                                   -9223372036854775808),
                          9223372036854775807)::bigint, 0)
    WHEN json_typeof(payload -> 'qty') = 'boolean'
      THEN CASE WHEN (payload ->> 'qty')::boolean THEN 1 ELSE 0 END
    ELSE 0 END;

-- An outbox row as a ledger row (without `later`).
CREATE TEMP VIEW audit_outbox_rows AS
SELECT o.id AS ord, o.event_id, o.aggregate_id, o.seq, o.event_type,
       o.status, pg_temp.audit_sku(o.event_type, o.payload) AS sku,
       pg_temp.audit_qty(o.event_type, o.payload) AS qty,
       COALESCE(outbox_ms(o.published_at), 0) AS published_at
FROM outbox o;

-- 1. The ledger, one snapshot. Returns the rows copied.
PREPARE audit_copy_ledger AS
WITH copied AS (
  INSERT INTO pg_temp.audit_ledger SELECT r.*, false FROM audit_outbox_rows r
  RETURNING 1)
SELECT count(*) AS rows FROM copied;

-- 2. Rows the ledger lacks, and every head, in one snapshot. Returns both
-- counts.
PREPARE audit_copy_later AS
WITH later AS (
  INSERT INTO pg_temp.audit_ledger SELECT r.*, true FROM audit_outbox_rows r
  WHERE NOT EXISTS (SELECT 1 FROM pg_temp.audit_ledger l
                    WHERE l.event_id = r.event_id)
  RETURNING 1),
heads AS (
  INSERT INTO pg_temp.audit_heads
  SELECT aggregate_id, last_seq FROM aggregate_heads
  RETURNING 1)
SELECT (SELECT count(*) FROM later) AS later_rows,
       (SELECT count(*) FROM heads) AS heads;

-- Before reading the later rows again (audit_tables::forget_all_but_ledger).
PREPARE audit_forget_later AS
WITH rows AS (DELETE FROM pg_temp.audit_ledger WHERE later RETURNING 1),
heads AS (DELETE FROM pg_temp.audit_heads RETURNING 1)
SELECT (SELECT count(*) FROM rows) AS later_rows,
       (SELECT count(*) FROM heads) AS heads;

-- A page of the ledger ($1 later: false for the ledger, true for the later
-- rows) after ord $2 (0 first), at most $3 rows, in ord order: what
-- audit_tables::add_row takes, with published_at in ms (0: not published).
-- The next page starts after the last ord; a short page is the last.
PREPARE audit_ledger_page (boolean, bigint, integer) AS
SELECT ord, event_id, aggregate_id, seq, event_type, status, sku, qty,
       published_at
FROM pg_temp.audit_ledger
WHERE later = $1 AND ord > $2
  AND outbox_require($1 IS NOT NULL AND $2 IS NOT NULL AND $3 >= 1,
                     'audit_ledger_page: later or after NULL, limit below 1')
ORDER BY ord LIMIT $3;

-- A page of the heads after aggregate_id $1 ('' first), at most $2.
PREPARE audit_heads_page (text, integer) AS
SELECT aggregate_id, last_seq FROM pg_temp.audit_heads
WHERE aggregate_id > $1
  AND outbox_require($1 IS NOT NULL AND $2 >= 1,
                     'audit_heads_page: after NULL or limit below 1')
ORDER BY aggregate_id LIMIT $2;
