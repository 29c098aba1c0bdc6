-- Effects in Redis, applied once each with the event's dedup record.
local effects = {}

-- Who owns each account, for a Redis-side lookup: the hash
-- <key_prefix>effects:owners.
function effects.AccountOpened(event, store)
  store.call('HSET', store.key('owners'), event.aggregate_id,
             event.payload.owner)
end

return effects
