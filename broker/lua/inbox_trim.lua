-- KEYS: processed, summary, trimmed_reserved, trimmed_aggregates, the
-- inbox's gaps. ARGV: cutoff, event_ids...
-- One call is atomic with the inbox script, so a reader never sees a record
-- gone without its quantity moved to trimmed_reserved.
local processed, summary, reserved = KEYS[1], KEYS[2], KEYS[3]
local by_aggregate, gaps = KEYS[4], KEYS[5]
local wrong = wrong_key_type({{processed, 'hash'}, {summary, 'hash'},
                              {reserved, 'hash'}, {by_aggregate, 'hash'},
                              {gaps, 'hash'}})
if wrong then
  return wrong
end
local cutoff = tonumber(ARGV[1])
local trimmed, kept, gone = 0, 0, 0
for i = 2, #ARGV do
  local text = redis.call('HGET', processed, ARGV[i])
  local ok, r = false, nil
  if text then
    ok, r = pcall(cjson.decode, text)
  else
    gone = gone + 1
  end
  -- Only records the inbox script wrote carry "at"; anything else is kept,
  -- as it cannot be accounted for.
  -- An aggregate whose seq jump was too long for the inbox to record its
  -- gaps tells duplicates by their records alone: keep them.
  if ok and type(r) == 'table' and type(r.at) == 'number' and r.at < cutoff
      and type(r.aggregate_id) == 'string'
      and redis.call('HEXISTS', gaps, r.aggregate_id .. ':overflow') == 0
  then
    -- An OrderPlaced recorded with neither sku nor qty had its effect in
    -- the consumer's own database (consumer.sink): nothing to move.
    if r.event_type == 'OrderPlaced' and (r.sku ~= nil or r.qty ~= nil) then
      if type(r.sku) ~= 'string' or type(r.qty) ~= 'number' then
        ok = false
      else
        -- A field that is not an integer, or an overflow: keep the record
        -- (scripts are not rolled back, so nothing may fail half-way).
        local moved = redis.pcall('HINCRBY', reserved, r.sku,
                                  string.format('%d', r.qty))
        if type(moved) == 'table' and moved.err then
          ok = false
        end
      end
    end
  else
    ok = false
  end
  if ok then
    redis.call('HDEL', processed, ARGV[i])
    redis.call('HINCRBY', by_aggregate, r.aggregate_id, 1)
    trimmed = trimmed + 1
  else
    kept = kept + 1
  end
end
if trimmed > 0 then
  redis.call('HINCRBY', summary, 'records', trimmed)
  local before = tonumber(redis.call('HGET', summary, 'before')) or 0
  if cutoff > before then
    redis.call('HSET', summary, 'before', ARGV[1])
  end
end
return {trimmed, kept, gone}
