-- (d) one order per key, with its one OrderPlaced row, whatever raced.
SELECT outcome, count(*) FROM proof_outcomes GROUP BY 1 ORDER BY 1;
SELECT (SELECT count(*) FROM request_keys) AS keys,
       (SELECT count(*) FROM orders) AS orders,
       (SELECT count(*) FROM outbox WHERE event_type = 'OrderPlaced')
         AS order_events,
       (SELECT count(*) FROM request_keys k JOIN orders o ON o.id = k.order_id
        JOIN outbox e ON e.event_id = k.event_id
        AND e.aggregate_id = 'order-' || o.id) AS keys_with_their_rows;
-- Each answer against the order that was placed: replayed exactly when it
-- asked the same qty.
SELECT count(*) FILTER (WHERE (p.outcome = 'placed') AND p.qty <> o.qty)
         AS placed_wrong,
       count(*) FILTER (WHERE p.outcome <> 'placed'
                        AND (p.outcome = 'replayed') <> (p.qty = o.qty))
         AS answered_wrong
FROM proof_outcomes p JOIN request_keys k USING (request_id)
JOIN orders o ON o.id = k.order_id;
