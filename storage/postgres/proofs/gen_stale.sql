-- (f) statistics that lie and dead tuples, what a table looks like between
-- autovacuum runs (switched off here, so that it stays so): 200k PUBLISHED
-- rows, analyzed while nothing was unpublished (the statistics say
-- outbox_unpublished is empty); since then, not analyzed nor vacuumed:
-- 500 aggregates whose head is SENDING under another relay's live lease
-- with 10 rows behind, 2000 aggregates with one due row, and 3000
-- aggregates of 10 rows whose first 5 were claimed and published (30k
-- dead row versions, their entries still in outbox_unpublished). A bulk
-- load with its own seqs and heads (see gen_history.sql).
SET session_replication_role = replica;
ALTER TABLE outbox SET (autovacuum_enabled = off);
ALTER TABLE aggregate_heads SET (autovacuum_enabled = off);
INSERT INTO outbox (aggregate_id, seq, event_type, payload, status,
                    published_at, lease_epoch, attempts)
SELECT format('h-%s', lpad((i / 50)::text, 7, '0')), i % 50 + 1, 'T', '{}',
       'PUBLISHED', now() - interval '1 day', 1, 1
FROM generate_series(0, 199999) i;
VACUUM ANALYZE outbox;
INSERT INTO outbox (aggregate_id, seq, event_type, payload, status, owner,
                    lease_until, lease_epoch, attempts)
SELECT format('b-%s', lpad(a::text, 4, '0')), 1, 'T', '{}', 'SENDING',
       'other', now() + interval '1 hour', 1, 1
FROM generate_series(1, 500) a;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
SELECT format('b-%s', lpad(a::text, 4, '0')), s, 'T', '{}'
FROM generate_series(1, 500) a, generate_series(2, 11) s;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
SELECT format('c-%s', lpad(a::text, 4, '0')), 1, 'T', '{}'
FROM generate_series(1, 2000) a;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
SELECT format('d-%s', lpad(a::text, 4, '0')), s, 'T', '{}'
FROM generate_series(1, 3000) a, generate_series(1, 10) s;
UPDATE outbox SET status = 'SENDING', owner = 'gone',
                  lease_until = now() + interval '1 hour', lease_epoch = 1,
                  attempts = 1
WHERE aggregate_id LIKE 'd-%' AND seq <= 5;
UPDATE outbox SET status = 'PUBLISHED', owner = NULL, lease_until = NULL,
                  published_at = now()
WHERE aggregate_id LIKE 'd-%' AND seq <= 5;
INSERT INTO aggregate_heads (aggregate_id, last_seq)
SELECT aggregate_id, max(seq) FROM outbox GROUP BY 1;
SELECT s.n_live_tup AS live, s.n_dead_tup AS dead,
       (SELECT reltuples::bigint FROM pg_class
        WHERE relname = 'outbox_unpublished') AS unpublished_per_statistics,
       (SELECT count(*) FROM outbox WHERE published_at IS NULL)
         AS unpublished_really,
       (SELECT null_frac FROM pg_stats WHERE tablename = 'outbox'
          AND attname = 'published_at') AS published_at_null_frac
FROM pg_stat_user_tables s WHERE s.relname = 'outbox';
