-- KEYS: the older hash, the reservation hash. Every check before the first
-- write: Redis does not roll a script back.
local older, reserved = KEYS[1], KEYS[2]
local wrong = wrong_key_type({{older, 'hash'}, {reserved, 'hash'}})
if wrong then
  return wrong
end
-- The ACL is checked per command: a DEL refused after the HINCRBYs would
-- leave the hash to be added again.
if not redis.acl_check_cmd('DEL', older)
    or not redis.acl_check_cmd('HINCRBY', reserved, 'f', '1') then
  return redis.error_reply('NOPERM this user may not merge ' .. older
    .. ' into ' .. reserved .. ' (HINCRBY, DEL)')
end
-- Integers as HINCRBY reads them (no "0x10", " 5", "1e3", "+5", "007"),
-- within 2^53 so that Lua adds them exactly.
local exact = 9007199254740992
local function integer(text)
  if text == '0' or (#text <= 17 and string.find(text, '^%-?[1-9]%d*$')) then
    local n = tonumber(text)
    if math.abs(n) <= exact then
      return n
    end
  end
  return nil
end
local fields = redis.call('HGETALL', older)
for i = 1, #fields, 2 do
  local field = fields[i]
  local n = integer(fields[i + 1])
  local have = integer(redis.call('HGET', reserved, field) or '0')
  if not n or not have or math.abs(have + n) > exact then
    return redis.error_reply('OUTBOX_RESERVATION ' .. older .. '[' .. field
      .. '] cannot be added to ' .. reserved .. ': ' .. fields[i + 1])
  end
end
for i = 1, #fields, 2 do
  redis.call('HINCRBY', reserved, fields[i], fields[i + 1])
end
redis.call('DEL', older)
return #fields / 2
