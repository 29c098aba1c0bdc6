-- Extend only when ours; answer the holder ('' when nobody).
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  note(KEYS[2], ARGV[1], 'consuming', ARGV[2])
end
return current or ''
