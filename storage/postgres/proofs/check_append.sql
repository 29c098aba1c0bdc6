-- (a) after the run: gap-free from 1, and commit order = seq order.
SELECT aggregate_id, count(*) AS rows, min(seq), max(seq),
       count(DISTINCT seq) AS distinct_seqs,
       (SELECT last_seq FROM aggregate_heads h
        WHERE h.aggregate_id = o.aggregate_id) AS head
FROM outbox o WHERE aggregate_id = :'agg' GROUP BY aggregate_id;
SELECT count(*) AS commits_out_of_seq_order
FROM (SELECT pg_xact_commit_timestamp(xmin) AS ts,
             lag(pg_xact_commit_timestamp(xmin)) OVER (ORDER BY seq) AS prev
      FROM outbox WHERE aggregate_id = :'agg') x
WHERE ts < prev;
