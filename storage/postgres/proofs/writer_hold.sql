-- (e) a writer: an order and a follow-up event on hot-e, then it stalls
-- inside its transaction (killed there).
\set VERBOSITY verbose
BEGIN;
EXECUTE place_order_key('req-e', 'sku=S;qty=1', NULL, NULL) \gset
EXECUTE place_order_rows(:order_id, 'S', 1, :'event_id', NULL, NULL);
EXECUTE append_event('hot-e', 'T', '{"from":"A"}', NULL, NULL, NULL);
SELECT pg_sleep(30);
COMMIT;
