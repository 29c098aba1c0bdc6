-- Effects in the consumer's own database, each in one transaction with
-- its inbox row.
-- effect: MoneyDeposited
INSERT INTO balances (account, tenant, cents)
  VALUES (:aggregate_id, :headers.tenant, :payload.cents::bigint)
  ON CONFLICT (account) DO UPDATE SET cents = balances.cents + excluded.cents
