-- (b) after the relays: every row claimed once, never past a lower
-- unpublished row of another claim, published once, in seq order.
SELECT count(*) AS leases, count(DISTINCT event_id) AS rows_leased,
       count(*) FILTER (WHERE blockers > 0) AS head_of_line_violations,
       count(DISTINCT owner) AS relays
FROM proof_claims;
SELECT owner, count(*) AS rows FROM proof_claims GROUP BY owner ORDER BY 1;
SELECT count(*) AS published, count(DISTINCT (aggregate_id, seq)) AS distinct,
       (SELECT count(*) FROM outbox WHERE status = 'PUBLISHED')
         AS rows_published,
       (SELECT count(*) FROM outbox WHERE status <> 'PUBLISHED') AS left
FROM proof_published;
SELECT count(*) AS order_violations FROM (
  SELECT seq, lag(seq) OVER (PARTITION BY aggregate_id ORDER BY id) AS prev
  FROM proof_published) x
WHERE seq <> coalesce(prev, 0) + 1;
-- The first leases that broke head-of-line, if any, and what blocked them
-- (seq:status:owner:lease_until:epoch).
SELECT aggregate_id, seq, owner, blockers, left(blocked_by, 60) AS blocked_by
FROM proof_claims WHERE blockers > 0 ORDER BY at LIMIT 3;
