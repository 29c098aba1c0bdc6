-- (e) a relay's claim left uncommitted (killed there).
\set VERBOSITY verbose
BEGIN;
\o /dev/null
EXECUTE claim('R', NULL, 60000, 32, 1024, '', 5);
\o
SELECT pg_sleep(30);
COMMIT;
