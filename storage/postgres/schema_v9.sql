-- outbox on PostgreSQL: schema version 8 -> 9 (docs/postgres-protocol.md).
--
-- `outbox init` runs this file after the earlier ones, in the same
-- transaction and under the same lock as schema.sql (see its header).
-- Version 9 makes a claim touch fewer indexes, measured with `outbox bench`
-- (docs/performance/round-3-postgres.md): one relay process went from about 8k to 16k
-- events/s, and the server's CPU per event fell by half.
--
-- outbox_leased (owner) WHERE status = 'SENDING' held one entry per leased
-- row, every one under the same few owners: each claim added 256 entries
-- under its owner's key and each ack left them dead, so the acks, which
-- found their rows through it, stepped over ever more dead entries (61 us
-- of server time per row acknowledged; 22 us through the primary key).
-- Its readers (release_unknown, leases_by_owner) now go through
-- outbox_unpublished: a SENDING row is unpublished, so they read the
-- backlog, never the history.
--
-- outbox_failed (id) WHERE status = 'FAILED' named status in its
-- predicate, and so did outbox_leased: a column an index names (key or
-- predicate) forbids a HOT update when it changes, and the claim changes
-- status and owner. Without them the claim changes no indexed column and
-- is a HOT update wherever its row's page has room: one new heap tuple,
-- no index entry (four before). `outbox failed` and retry-all read FAILED
-- rows through outbox_unpublished instead (a FAILED row is unpublished):
-- their cost follows the backlog, not the history.
--
-- fillfactor 70 (was 90): the room a page keeps for its rows' claims. A
-- page of about 48 rows kept room for 4 new versions; now for about 14,
-- and what a published row's old versions held is pruned back as the page
-- is read again. It applies to pages written from now on.
DROP INDEX outbox_leased;
DROP INDEX outbox_failed;
ALTER TABLE outbox SET (fillfactor = 70);

UPDATE schema_version SET version = 9, migrated_at = clock_timestamp();
