-- Pushes to several lists at once. MULTI/EXEC is not all-or-nothing: an
-- RPUSH that fails at run time (WRONGTYPE) leaves the other RPUSHes
-- applied. This script checks every list before it writes anything, and a
-- script runs without interleaving, so either every value is pushed or
-- none. (Under maxmemory, Redis refuses only a script's first write.)
-- KEYS: the lists, then their doorbells (as many). ARGV: for each list in
-- turn, the number of values it gets, then those values in order. Returns
-- the number of values pushed.
local lists = #KEYS / 2
for i = 1, lists do
  local key = KEYS[i]
  local kind = redis.call('TYPE', key).ok
  if kind ~= 'list' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE key ' .. key .. ' holds a ' .. kind
      .. ', not a list: nothing was published')
  end
end
local at = 1
local total = 0
for i = 1, lists do
  local key = KEYS[i]
  local count = tonumber(ARGV[at])
  local first, last = at + 1, at + count
  -- unpack() is bounded by Lua's stack: push in chunks.
  while first <= last do
    local upto = math.min(first + 999, last)
    redis.call('RPUSH', key, unpack(ARGV, first, upto))
    first = upto + 1
  end
  at = last + 1
  total = total + count
end
-- Doorbells are hints: a failure there must not fail a publish whose
-- entries are already pushed.
for i = lists + 1, #KEYS do
  redis.pcall('LPUSH', KEYS[i], '1')
  redis.pcall('LTRIM', KEYS[i], 0, 0)
end
return total
