-- KEYS: the dead-letter list, the inbox's gaps hash, then each target
--       queue followed by its doorbell.
-- ARGV: per record, in dead-letter order: the record exactly as stored, its
--       entry, the number (1, 2, ...) of its queue among the KEYS pairs,
--       and its seq's field of the gaps hash ("<aggregate_id>:<seq>").
-- Returns the number of entries pushed, or {'changed'} (nothing done) when
-- a record is no longer in the list.
local dead_letter, gaps = KEYS[1], KEYS[2]
local per_record = 4

-- Scripts are not rolled back on error: check every key before any write.
local expected = {{dead_letter, 'list'}, {gaps, 'hash'}}
for k = 3, #KEYS, 2 do
  expected[#expected + 1] = {KEYS[k], 'list'}
end
local wrong = wrong_key_type(expected)
if wrong then
  return wrong
end

-- Identical records (two copies of one event dead-lettered alike) are
-- interchangeable: count how many of each text must still be there.
local wanted, texts = {}, {}
for i = 1, #ARGV, per_record do
  local record = ARGV[i]
  if not wanted[record] then
    wanted[record] = 0
    texts[#texts + 1] = record
  end
  wanted[record] = wanted[record] + 1
end
for _, record in ipairs(texts) do
  local found = redis.call('LPOS', dead_letter, record, 'COUNT',
                           wanted[record])
  if #found < wanted[record] then
    return {'changed'}
  end
end

for _, record in ipairs(texts) do
  redis.call('LREM', dead_letter, wanted[record], record)
end
-- The last first, so that each queue's head ends in dead-letter order.
-- Each seq the inbox marked 'dead' is marked 'replay': the inbox applies
-- this copy, while it absorbs any other copy of a dead-lettered event as a
-- duplicate (inbox_options.lua). A seq without that mark is left alone: its
-- event was applied, or its copy is a duplicate anyway, and a mark nothing
-- would clear must not outlive it.
for i = #ARGV - per_record + 1, 1, -per_record do
  redis.call('LPUSH', KEYS[1 + 2 * tonumber(ARGV[i + 2])], ARGV[i + 1])
  if redis.call('HGET', gaps, ARGV[i + 3]) == 'dead' then
    redis.call('HSET', gaps, ARGV[i + 3], 'replay')
  end
end
-- Doorbells are hints, as for a publish: never fail over one.
for k = 4, #KEYS, 2 do
  redis.pcall('LPUSH', KEYS[k], '1')
  redis.pcall('LTRIM', KEYS[k], 0, 0)
end
return #ARGV / per_record
