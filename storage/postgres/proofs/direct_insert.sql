-- (a) other ways in: a plain INSERT without a seq is allocated one under
-- the aggregate's lock; one that names its seq, or moves a row, is refused;
-- and `SELECT (outbox_append(...)).*` appends twice.
\set VERBOSITY terse
\set ON_ERROR_STOP 0
INSERT INTO outbox (aggregate_id, event_type, payload)
  VALUES ('direct', 'T', '{}') RETURNING aggregate_id, seq;
INSERT INTO outbox (aggregate_id, event_type, payload)
  VALUES ('direct', 'T', '{}') RETURNING aggregate_id, seq;
INSERT INTO outbox (aggregate_id, seq, event_type, payload)
  VALUES ('direct', 3, 'T', '{}');
UPDATE outbox SET seq = 9 WHERE aggregate_id = 'direct' AND seq = 1;
SELECT (outbox_append('twice', 'T', '{}')).*;
SELECT * FROM outbox_append('once', 'T', '{}');
SELECT aggregate_id, count(*) AS rows, string_agg(seq::text, ',' ORDER BY seq)
  AS seqs
FROM outbox WHERE aggregate_id IN ('direct', 'twice', 'once')
GROUP BY 1 ORDER BY 1;
