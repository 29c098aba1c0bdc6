-- Take when free (or already ours: a retry after a lost reply); answer the
-- holder either way.
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if not current or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  note(KEYS[2], ARGV[1], 'consuming', ARGV[2])
  return ARGV[1]
end
note(KEYS[2], ARGV[1], 'standby', ARGV[2])
return current
