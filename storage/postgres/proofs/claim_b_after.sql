-- (b) relay B claims again once A has committed.
\echo A has committed; B claims again (batch 100); the table:
\o /dev/null
EXECUTE claim('B', NULL, 60000, 100, 1024, '', 5);
\o
SELECT aggregate_id, string_agg(seq || ':' || status || coalesce(':' || owner, ''), '  '
                                ORDER BY seq) AS rows
FROM outbox GROUP BY 1 ORDER BY 1;
