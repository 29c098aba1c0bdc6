-- KEYS: the dead-letter list, the hash of drop decisions.
-- ARGV: the number D of decisions; then per decision its field and its
--       JSON value without the opening brace and dropped_at (added here,
--       from Redis's clock); then per distinct record: the record exactly
--       as stored and how many copies of it to remove.
-- Returns the number of records removed, or {'changed'} (nothing done) when
-- a record is no longer in the list.
local dead_letter, dropped = KEYS[1], KEYS[2]

-- Scripts are not rolled back on error: check both keys before any write.
local wrong = wrong_key_type({{dead_letter, 'list'}, {dropped, 'hash'}})
if wrong then
  return wrong
end

local first_record = 2 + 2 * tonumber(ARGV[1])
for i = first_record, #ARGV, 2 do
  local wanted = tonumber(ARGV[i + 1])
  if #redis.call('LPOS', dead_letter, ARGV[i], 'COUNT', wanted) < wanted then
    return {'changed'}
  end
end

-- Integers as Redis wants them: tostring() would give "1.7e+12".
local now = redis.call('TIME')
local at = string.format('%d', tonumber(now[1]) * 1000
                               + math.floor(tonumber(now[2]) / 1000))
-- The decisions first: a command refused midway (an ACL checks each call
-- as it runs, and nothing is rolled back) then leaves a decision beside a
-- record still listed, which the audit counts as still waiting, never a
-- record gone without its decision.
for i = 2, first_record - 1, 2 do
  redis.call('HSET', dropped, ARGV[i], '{"dropped_at":' .. at .. ','
             .. ARGV[i + 1])
end
local removed = 0
for i = first_record, #ARGV, 2 do
  removed = removed + redis.call('LREM', dead_letter, ARGV[i + 1], ARGV[i])
end
return removed
