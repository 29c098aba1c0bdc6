-- (d) session B asks for the same key 0.5 s after A took it, as the writer
-- does: the order if the key is its own, else the key's answer.
BEGIN;
\timing on
EXECUTE place_order_key('req-x', 'sku=S;qty=2', NULL, NULL);
\timing off
SELECT :ROW_COUNT = 1 AS got \gset
\if :got
\echo B got the key: it places the order
SELECT order_id, event_id FROM request_keys WHERE request_id = 'req-x' \gset
EXECUTE place_order_rows(:order_id, 'S', 2, :'event_id', NULL, NULL);
\else
\echo B did not get the key: it reads it (replayed or conflict)
EXECUTE find_request_key('req-x');
\endif
COMMIT;
