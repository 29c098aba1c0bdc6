-- (a) a reader polling while the writers run (:seconds): each statement is
-- a new snapshot, and a snapshot that sees seq n of the aggregate must see
-- 1 .. n-1 too.
SELECT set_config('proof.agg', :'agg', false),
       set_config('proof.seconds', :'seconds', false) \gset
DO $$
DECLARE
  polls integer := 0;
  gaps integer := 0;
  seen bigint := 0;
  c bigint;
  m bigint;
  deadline timestamptz := clock_timestamp()
    + current_setting('proof.seconds')::integer * interval '1 s';
BEGIN
  WHILE clock_timestamp() < deadline LOOP
    SELECT count(*), coalesce(max(seq), 0) INTO c, m
      FROM outbox WHERE aggregate_id = current_setting('proof.agg');
    IF c <> m THEN gaps := gaps + 1; END IF;
    seen := m;
    polls := polls + 1;
    PERFORM pg_sleep(0.001);
  END LOOP;
  RAISE NOTICE 'reader on %: % snapshots up to seq %, % saw a gap',
    current_setting('proof.agg'), polls, seen, gaps;
END $$;
