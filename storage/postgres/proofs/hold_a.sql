-- (b) relay A claims 4 rows and keeps its transaction open for 3 s.
BEGIN;
\o /dev/null
EXECUTE claim('A', NULL, 60000, 4, 1024, '', 5);
\o
SELECT pg_sleep(3);
COMMIT;
