-- The demo's effect, built into outbox as `builtin:orders` (the default
-- consumer.effects_lua): an OrderPlaced reserves its quantity of its sku in
-- the hash <broker.key_prefix>effects:inventory.reserved. Copy this file
-- into your own effects file to keep the reservation beside your effects.
local effects = {}

-- Lua numbers are doubles: integers are exact up to 2^53 only.
local max_integer = 9007199254740992

function effects.OrderPlaced(event, store)
  local sku, qty = event.payload.sku, event.payload.qty
  -- Checked before the write: Redis keeps what a failing effect wrote.
  if type(sku) ~= 'string' or sku == '' then
    error('payload.sku must be a non-empty string', 0)
  end
  if not store.is_text(sku) then
    error('payload.sku must be UTF-8 text without control characters', 0)
  end
  if type(qty) ~= 'number' or qty ~= math.floor(qty) or qty < 1
      or qty > max_integer then
    error('payload.qty must be an integer >= 1 (at most 2^53)', 0)
  end
  local reserved = store.key('inventory.reserved')
  local quantity = string.format('%d', qty)
  local applied = pcall(store.call, 'HINCRBY', reserved, sku, quantity)
  if not applied then
    -- A poison effect (the sku's field is not an integer, or would
    -- overflow), named as Redis words it.
    error(reserved .. '[' .. sku .. '] += ' .. quantity .. ': '
      .. tostring(store.failed), 0)
  end
  -- Kept in the event's dedup record: `outbox verify` checks that each
  -- sku's reservation is the sum of its processed orders' quantities.
  return {sku = sku, qty = qty}
end

return effects
