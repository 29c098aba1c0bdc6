-- The bank's own tables, in the database its writers use (with the
-- outbox's tables, which `outbox init` creates beside them).
CREATE TABLE accounts (
  id text PRIMARY KEY,
  owner text NOT NULL
);
CREATE TABLE deposits (
  id bigserial PRIMARY KEY,
  account text NOT NULL REFERENCES accounts,
  cents bigint NOT NULL CHECK (cents > 0)
);
