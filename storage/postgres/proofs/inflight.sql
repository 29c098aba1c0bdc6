-- (e) an order committed, then one in flight when the server stops.
\set VERBOSITY verbose
BEGIN;
EXECUTE place_order_key('req-c', 'sku=S;qty=1', NULL, NULL) \gset
EXECUTE place_order_rows(:order_id, 'S', 1, :'event_id', NULL, NULL) \gset
SELECT pg_current_xact_id() AS committed_xid \gset
COMMIT;
BEGIN;
SELECT pg_current_xact_id() AS inflight_xid \gset
EXECUTE place_order_key('req-i', 'sku=S;qty=1', NULL, NULL) \gset
EXECUTE place_order_rows(:order_id, 'S', 1, :'event_id', NULL, NULL) \gset
\echo committed xid :committed_xid, in-flight xid :inflight_xid
\o :xid_file
\qecho :committed_xid :inflight_xid
\o
SELECT pg_sleep(30);
COMMIT;
