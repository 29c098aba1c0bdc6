-- KEYS[1]: the relay processes. ARGV: process, state ("running" or
-- "stopped"), relays, ttl in ms, how long notes are kept in ms.
-- "since" is kept while the state stays; a stopped note holds until now.
-- Redis's clock, so every process and `outbox status` read one time.
if redis.replicate_commands then redis.replicate_commands() end
local hash = KEYS[1]
local kind = redis.call('TYPE', hash)
if kind.ok ~= 'none' and kind.ok ~= 'hash' then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = ARGV[2]
local since = now
local old = redis.call('HGET', hash, ARGV[1])
if old then
  local old_state, old_since = string.match(old, '^(%a+) %d+ (%d+)')
  if old_state == state then since = tonumber(old_since) end
end
local expires = now
if state == 'running' then expires = now + tonumber(ARGV[4]) end
redis.pcall('HSET', hash, ARGV[1], string.format('%s %d %d %d %d', state,
            tonumber(ARGV[3]), since, now, expires))
local keep = tonumber(ARGV[5])
local all = redis.call('HGETALL', hash)
for i = 1, #all, 2 do
  -- By the last number, the note's expiry, whatever comes before it: a
  -- later version may add fields, and this pruning must not erase them.
  local expiry = tonumber(string.match(all[i + 1], ' (%d+)$'))
  if not expiry or expiry < now - keep then
    redis.pcall('HDEL', hash, all[i])
  end
end
redis.pcall('PEXPIRE', hash, keep)
return 1
