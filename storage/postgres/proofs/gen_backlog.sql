-- (c) the backlog: 500 aggregates 'b-NNNN' whose head (seq 1) is SENDING
-- under a live lease of another relay, with rows seq 2 .. :behind + 1
-- PENDING behind it (existing rows are kept: run again to grow it); and
-- 2000 aggregates 'c-NNNN' with one due PENDING row each, the work a claim
-- can take. A bulk load with its own seqs and heads (see gen_history.sql).
SET session_replication_role = replica;
INSERT INTO outbox (aggregate_id, seq, event_type, payload, status, owner,
                    lease_until, lease_epoch, attempts)
SELECT format('b-%s', lpad(a::text, 4, '0')), 1, 'T', '{}', 'SENDING',
       'other', now() + interval '1 hour', 1, 1
FROM generate_series(1, 500) a
ON CONFLICT DO NOTHING;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
SELECT format('b-%s', lpad(a::text, 4, '0')), s, 'T', '{}'
FROM generate_series(1, 500) a, generate_series(2, :behind + 1) s
ON CONFLICT DO NOTHING;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
SELECT format('c-%s', lpad(a::text, 4, '0')), 1, 'T', '{}'
FROM generate_series(1, 2000) a
ON CONFLICT DO NOTHING;
INSERT INTO aggregate_heads (aggregate_id, last_seq)
SELECT aggregate_id, max(seq) FROM outbox
WHERE aggregate_id LIKE 'b-%' OR aggregate_id LIKE 'c-%' GROUP BY 1
ON CONFLICT (aggregate_id) DO UPDATE SET last_seq = excluded.last_seq;
VACUUM ANALYZE outbox;
VACUUM ANALYZE aggregate_heads;
SELECT status, count(*) FROM outbox GROUP BY 1 ORDER BY 1;
