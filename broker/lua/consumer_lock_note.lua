-- Notes in the processes hash (KEYS[2]) that the process of token ARGV[1]
-- is `role` ("consuming" or "standby"), since when (kept while the role
-- stays), until when the note holds (now + the lock's ttl), when it was
-- seen (now: a heartbeat, which `outbox status` finds stale long before
-- the note runs out), and the expiry again: earlier versions read it
-- third (status) and last (this script's pruning); drops the
-- notes of processes that stopped renewing theirs. Redis's clock, so every
-- process and `outbox status` read one time. It never fails the lock: a
-- hash it cannot write (a full Redis, a key of another type) only goes
-- without the note.
local function note(hash, token, role, ttl)
  if redis.replicate_commands then redis.replicate_commands() end
  local kind = redis.call('TYPE', hash)
  if kind.ok ~= 'none' and kind.ok ~= 'hash' then return end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local process = string.match(token, '^(.*)#[^#]*$') or token
  local since = now
  local old = redis.call('HGET', hash, process)
  if old then
    local old_role, old_since = string.match(old, '^(%a+) (%d+)')
    if old_role == role then since = tonumber(old_since) end
  end
  local expires = now + tonumber(ttl)
  redis.pcall('HSET', hash, process, string.format('%s %d %d %d %d', role,
              since, expires, now, expires))
  local all = redis.call('HGETALL', hash)
  for i = 1, #all, 2 do
    local expires = tonumber(string.match(all[i + 1], ' (%d+)$'))
    if not expires or expires <= now then redis.pcall('HDEL', hash, all[i]) end
  end
  redis.pcall('PEXPIRE', hash, ttl)
end
