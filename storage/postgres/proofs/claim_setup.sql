-- (b) :aggregates aggregates of 20 events; the relays all start their walks at one
-- of the first three, so they race for the same heads. Two observers, filled
-- by triggers independent of the relays: every lease handed out (with the
-- lower unpublished rows of its aggregate that were not in the same claim at
-- that moment), and every row "published" to the stand-in broker.
SELECT count(*) AS events FROM (
  SELECT outbox_append(format('agg-%s', lpad(a::text, 4, '0')), 'T', '{}')
  FROM generate_series(1, 20) i, generate_series(1, :aggregates) a) x;

-- blockers: how many; blocked_by: each as seq:status:owner:lease_until:epoch.
CREATE TABLE proof_claims (
  event_id uuid, aggregate_id text, seq bigint, owner text, epoch bigint,
  lease_until timestamptz, blockers bigint, blocked_by text,
  xid xid8 DEFAULT pg_current_xact_id(), at timestamptz DEFAULT clock_timestamp(),
  UNIQUE (event_id, epoch));
CREATE TABLE proof_published (
  id bigserial PRIMARY KEY, aggregate_id text, seq bigint, owner text);

CREATE FUNCTION proof_note_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO proof_claims (event_id, aggregate_id, seq, owner, epoch,
                            lease_until, blockers, blocked_by)
  SELECT NEW.event_id, NEW.aggregate_id, NEW.seq, NEW.owner, NEW.lease_epoch,
         NEW.lease_until, count(*),
         string_agg(concat_ws(':', o.seq, o.status, o.owner, o.lease_until,
                              o.lease_epoch), ' ')
  FROM outbox o
  WHERE o.aggregate_id = NEW.aggregate_id AND o.seq < NEW.seq
    AND o.published_at IS NULL
    AND NOT (o.status = 'SENDING' AND o.owner = NEW.owner
             AND o.lease_until = NEW.lease_until);
  RETURN NULL;
END $$;
CREATE TRIGGER proof_note_claim AFTER UPDATE ON outbox FOR EACH ROW
  WHEN (NEW.status = 'SENDING' AND NEW.lease_epoch <> OLD.lease_epoch)
  EXECUTE FUNCTION proof_note_claim();
