-- Removes each applied entry's oldest copy, in order: what LREM 1 per
-- entry would do one call at a time, but the entries are named by their
-- SHA-1, not sent back whole (an entry may be up to
-- broker.max_consume_bytes). Not LTRIM by count alone: that is only right
-- when the list starts with this batch, and after a lost reply or a
-- recovery that raced us it may hold more in front (or less). So LTRIM
-- only once the head is seen to be the batch, entry by entry (the normal
-- case); else find each in the list and LREM it by the value read here.
--
-- KEYS[1]: the processing list, KEYS[2]: the consumers' lock. ARGV: the
-- fence's holder ('' for none), then the applied entries' SHA-1 (hex),
-- oldest first.
local refusal = fence_refusal(KEYS[2], ARGV[1])
if refusal then
  return refusal
end
local count = #ARGV - 1
local head = redis.call('LRANGE', KEYS[1], 0, count - 1)
local is_head = #head == count
for i = 1, #head do
  if not is_head then break end
  is_head = redis.sha1hex(head[i]) == ARGV[i + 1]
end
if is_head then
  redis.call('LTRIM', KEYS[1], count, -1)
  return count
end
local list = redis.call('LRANGE', KEYS[1], 0, -1)
local digests, taken = {}, {}
local removed = 0
for i = 2, #ARGV do
  for j = 1, #list do
    if not taken[j] then
      digests[j] = digests[j] or redis.sha1hex(list[j])
      if digests[j] == ARGV[i] then
        -- The first copy of this value not yet taken is its oldest left.
        redis.call('LREM', KEYS[1], 1, list[j])
        taken[j] = true
        removed = removed + 1
        break
      end
    end
  end
end
return removed
