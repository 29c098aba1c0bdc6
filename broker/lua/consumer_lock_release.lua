-- Delete only when ours: a late release must not free a successor's lock.
-- The process's note goes either way: it stops waiting too.
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV[1]: token.
local process = string.match(ARGV[1], '^(.*)#[^#]*$') or ARGV[1]
if redis.call('TYPE', KEYS[2]).ok == 'hash' then
  redis.pcall('HDEL', KEYS[2], process)
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
