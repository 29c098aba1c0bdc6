#include "broker/fence.hpp"

namespace outbox::broker {

const std::string& lua_fence_check() {
  static const std::string source = std::string{R"lua(
local function fence_refusal(lock, holder, ttl_ms)
  if holder == '' then
    return nil
  end
  local current = redis.call('GET', lock)
  if not current then
    -- Expired while nobody took it: nobody recovered our entries, so
    -- carrying on in order is safe.
    redis.call('SET', lock, holder, 'PX', ttl_ms)
    return nil
  end
  if current ~= holder then
    return redis.error_reply(')lua"} +
                                    fenced_error_prefix +
                                    R"lua( the consumers lock ' .. lock
      .. ' is held by ' .. current .. ', not by ' .. holder)
  end
  return nil
end
)lua";
  return source;
}

} // namespace outbox::broker
