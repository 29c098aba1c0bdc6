-- (e) what the killed transactions left.
SELECT (SELECT count(*) FROM request_keys WHERE request_id = 'req-e')
         AS key_e,
       (SELECT count(*) FROM orders) AS orders,
       (SELECT string_agg(seq || ':' || (payload->>'from'), ' ' ORDER BY seq)
        FROM outbox WHERE aggregate_id = 'hot-e') AS hot_e,
       (SELECT last_seq FROM aggregate_heads WHERE aggregate_id = 'hot-e')
         AS hot_e_head;
SELECT status, owner, max(lease_epoch) AS epoch, max(attempts) AS attempts,
       count(*)
FROM outbox WHERE aggregate_id LIKE 'r-%' GROUP BY 1, 2;
