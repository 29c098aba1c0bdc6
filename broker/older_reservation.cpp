#include "broker/older_reservation.hpp"

#include "broker/lua_script.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

namespace {

// KEYS: the older hash, the reservation hash. Every check before the first
// write: Redis does not roll a script back.
const char* const merge_source = R"lua(
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
)lua";

} // namespace

std::string older_reservation(const keys& names) {
  return names.key_prefix + "inventory.reserved";
}

std::int64_t merge_older_reservation(connection& conn, const keys& names) {
  static const std::string source =
      std::string{lua_key_type_check()} + merge_source;
  lua_script merge{source};
  auto reply = merge.run(conn, {older_reservation(names), names.reserved}, {});
  return reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
}

} // namespace outbox::broker
