-- (e) after the restart: the committed order whole, the in-flight one
-- absent (its request key too: asking for it again tells a writer that
-- lost its connection in COMMIT what happened), and what pg_xact_status
-- says of each transaction.
SELECT request_id, order_id,
       (SELECT count(*) FROM outbox e WHERE e.event_id = k.event_id) AS events
FROM request_keys k ORDER BY 1;
SELECT pg_xact_status(:'committed_xid'::xid8) AS committed_xid_status;
\set ON_ERROR_STOP 0
SELECT pg_xact_status(:'inflight_xid'::xid8) AS inflight_xid_status;
