-- (d) session A takes the key, then holds it 2 s before it places the order.
BEGIN;
EXECUTE place_order_key('req-x', 'sku=S;qty=2', NULL, NULL) \gset
SELECT pg_sleep(2);
EXECUTE place_order_rows(:order_id, 'S', 2, :'event_id', NULL, NULL) \gset
:end_a;
