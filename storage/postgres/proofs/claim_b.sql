-- (b) relay B claims while A's claim is uncommitted.
CREATE EXTENSION IF NOT EXISTS pgrowlocks;
\echo rows locked by A (its uncommitted claim), seen by pgrowlocks:
SELECT o.aggregate_id, o.seq, l.modes
FROM pgrowlocks('outbox') l JOIN outbox o ON o.ctid = l.locked_row
ORDER BY 1, 2;
\echo B claims now (batch 100); B holds:
\o /dev/null
EXECUTE claim('B', NULL, 60000, 100, 1024, '', 5);
\o
SELECT aggregate_id, string_agg(seq::text, ',' ORDER BY seq) AS seqs
FROM outbox WHERE owner = 'B' GROUP BY 1 ORDER BY 1;
