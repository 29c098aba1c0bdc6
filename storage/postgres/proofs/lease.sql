-- (b) the fence, takeover, backoff, give-up and retry, on the test clock
-- (now_ms given): 2 aggregates of 3 events created at t=1000, ttl 100,
-- max_attempts 2, backoff delays 50 then 100.
\pset footer off
\set rows 'SELECT aggregate_id AS agg, seq, status, owner, lease_epoch AS epoch, attempts, outbox_ms(lease_until) AS lease_until, outbox_ms(available_at) AS due, last_error FROM outbox ORDER BY 1, 2'
SELECT count(*) AS events FROM (
  SELECT outbox_append('agg-' || a, 'T', '{}', NULL, outbox_ts(1000))
  FROM generate_series(1, 3) i, generate_series(1, 2) a) x;
SELECT event_id AS e11 FROM outbox WHERE aggregate_id = 'agg-1' AND seq = 1 \gset
SELECT event_id AS e12 FROM outbox WHERE aggregate_id = 'agg-1' AND seq = 2 \gset
SELECT event_id AS e21 FROM outbox WHERE aggregate_id = 'agg-2' AND seq = 1 \gset
SELECT event_id AS e22 FROM outbox WHERE aggregate_id = 'agg-2' AND seq = 2 \gset
SELECT event_id AS e23 FROM outbox WHERE aggregate_id = 'agg-2' AND seq = 3 \gset
\o /dev/null
EXECUTE claim('r1', 1000, 100, 10, 1024, '', 2);
\o
\echo t=1010 r1 fails agg-1 seq 1, 2 (publish error); acks agg-2 seq 1 with a wrong epoch, as r2, then right; renews agg-2 seq 2, 3 at t=1030
EXECUTE fail('r1', ARRAY[:'e11', :'e12']::uuid[], '{1,1}', 'boom', 1010, 2, '{50,100}');
EXECUTE ack('r1', ARRAY[:'e21']::uuid[], '{7}', 1020);
EXECUTE ack('r2', ARRAY[:'e21']::uuid[], '{1}', 1020);
EXECUTE ack('r1', ARRAY[:'e21']::uuid[], '{1}', 1020);
EXECUTE renew('r1', ARRAY[:'e22', :'e23']::uuid[], '{1,1}', 1030, 100);
:rows;
\echo t=1055 r2 claims: agg-1 head backs off until 1060, agg-2 head leased to r1 until 1130: nothing
EXECUTE claim('r2', 1055, 100, 10, 1024, '', 2);
\echo t=1140 r2 claims: agg-1 seq 1, 2 due, seq 3 and agg-2 seq 2, 3 expired: taken over
\o /dev/null
EXECUTE claim('r2', 1140, 100, 10, 1024, '', 2);
\o
:rows;
\echo r1, a zombie, acks agg-2 seq 2 (epoch 1): rejected
EXECUTE ack('r1', ARRAY[:'e22']::uuid[], '{1}', 1150);
\echo t=1300, r2 is gone: r3 claims; the heads are at max_attempts 2: FAILED, and they block
\o /dev/null
EXECUTE claim('r3', 1300, 100, 10, 1024, '', 2);
\o
:rows;
\echo retry agg-1 seq 1 (and a row that is not FAILED, and an unknown id)
EXECUTE retry(ARRAY[:'e11', :'e21', gen_random_uuid()]::uuid[], 1400);
\echo t=1400 r4 claims (max_attempts 5), then releases (attempts refunded)
\o /dev/null
EXECUTE claim('r4', 1400, 100, 10, 1024, '', 5);
\o
SELECT array_agg(event_id ORDER BY id) AS ids,
       array_agg(lease_epoch ORDER BY id) AS epochs
FROM outbox WHERE owner = 'r4' \gset
EXECUTE release('r4', :'ids', :'epochs');
:rows;
