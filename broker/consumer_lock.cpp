#include "broker/consumer_lock.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

/// Take when free (or already ours: a retry after a lost reply); answer the
/// holder either way.
const char* acquire_source = R"lua(
-- KEYS[1]: the lock. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if not current or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return current
)lua";

/// Extend only when ours; answer the holder ('' when nobody).
const char* renew_source = R"lua(
-- KEYS[1]: the lock. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return current or ''
)lua";

/// Delete only when ours: a late release must not free a successor's lock.
const char* release_source = R"lua(
-- KEYS[1]: the lock. ARGV[1]: token.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

std::string holder_of(const reply& r) {
  if (r->type != REDIS_REPLY_STRING)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to the consumer lock script");
  return reply_text(*r);
}

} // namespace

consumer_lock::consumer_lock(connection& conn, std::string key)
    : conn_(conn), key_(std::move(key)), acquire_(acquire_source),
      renew_(renew_source), release_(release_source) {}

std::string consumer_lock::acquire(const std::string& token,
                                   std::int64_t ttl_ms) {
  return holder_of(
      acquire_.run(conn_, {key_}, {token, std::to_string(ttl_ms)}));
}

std::string consumer_lock::renew(const std::string& token,
                                 std::int64_t ttl_ms) {
  return holder_of(renew_.run(conn_, {key_}, {token, std::to_string(ttl_ms)}));
}

void consumer_lock::release(const std::string& token) {
  release_.run(conn_, {key_}, {token});
}

} // namespace outbox::broker
