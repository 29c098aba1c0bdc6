-- The consumer's own database: what its SQL effects write (the inbox
-- table beside it comes from `outbox init --sink`).
CREATE TABLE balances (
  account text PRIMARY KEY,
  tenant text NOT NULL,
  cents bigint NOT NULL
);
