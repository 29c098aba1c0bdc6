-- (c) PUBLISHED history: aggregates 'h-NNNNNNN' of 50 rows each, rows
-- :from + 1 .. :to of it (so 10k, then 990k more). A bulk load with its
-- own seqs and heads, as a restore makes one: outbox_allocate_seq does not
-- fire for session_replication_role = replica.
SET session_replication_role = replica;
INSERT INTO outbox (aggregate_id, seq, event_type, payload, status,
                    published_at, created_at, available_at, lease_epoch,
                    attempts)
SELECT format('h-%s', lpad((i / 50)::text, 7, '0')), i % 50 + 1,
       'OrderPlaced', '{"order_id":1,"sku":"x","qty":1}', 'PUBLISHED',
       now() - interval '1 day', now() - interval '1 day',
       now() - interval '1 day', 1, 1
FROM generate_series(:from, :to - 1) i;
INSERT INTO aggregate_heads (aggregate_id, last_seq)
SELECT aggregate_id, max(seq) FROM outbox
WHERE aggregate_id LIKE 'h-%' GROUP BY 1
ON CONFLICT (aggregate_id) DO UPDATE SET last_seq = excluded.last_seq;
