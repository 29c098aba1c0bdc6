#include "broker/consumer_lock.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

/// Take when free, extend when ours; either way answer the holder.
const char* hold_source = R"lua(
-- KEYS[1]: the lock. ARGV: holder, ttl in ms.
local current = redis.call('GET', KEYS[1])
if not current or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return current
)lua";

/// Delete only when ours: a late release must not free a successor's lock.
const char* release_source = R"lua(
-- KEYS[1]: the lock. ARGV[1]: holder.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

} // namespace

consumer_lock::consumer_lock(connection& conn, std::string key)
    : conn_(conn), key_(std::move(key)), hold_(hold_source),
      release_(release_source) {}

std::string consumer_lock::hold(const std::string& holder,
                                std::int64_t ttl_ms) {
  auto r = hold_.run(conn_, {key_}, {holder, std::to_string(ttl_ms)});
  if (r->type != REDIS_REPLY_STRING)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to the consumer lock script");
  return reply_text(*r);
}

void consumer_lock::release(const std::string& holder) {
  release_.run(conn_, {key_}, {holder});
}

} // namespace outbox::broker
