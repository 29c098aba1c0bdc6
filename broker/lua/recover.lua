-- Moves the processing list back to the head of the queue: taking from its
-- tail and pushing on the queue's head keeps the original order. Bounded by
-- the length read first, so it cannot spin.
--
-- Counts the entries it moves in the counters' `recovered`, in the same
-- script: read_stats compares it before and after its reads, because an
-- entry moved back (and popped again into a list its scan missed) between
-- them would be counted nowhere.
--
-- KEYS[1]: the processing list, KEYS[2]: the queue, KEYS[3]: the
-- consumers' lock, KEYS[4]: the counters. ARGV[1]: the fence's holder (''
-- for none).
local refusal = fence_refusal(KEYS[3], ARGV[1])
if refusal then
  return refusal
end
local count = redis.call('LLEN', KEYS[1])
if count == 0 then
  return 0
end
-- Scripts are not rolled back: count before the first move, so that no
-- move goes uncounted (a counter that refuses stops the script here).
local wrong = wrong_key_type({{KEYS[4], 'hash'}})
if wrong then
  return wrong
end
redis.call('HINCRBY', KEYS[4], 'recovered', count)
for _ = 1, count do
  redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
end
return count
