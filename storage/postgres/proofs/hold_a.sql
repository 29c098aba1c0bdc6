-- (b) relay A claims 4 rows and keeps its transaction open for 2 s.
BEGIN;
\o /dev/null
EXECUTE claim('A', NULL, 60000, 4, 1024, '', 5);
\o
SELECT pg_sleep(2);
COMMIT;
