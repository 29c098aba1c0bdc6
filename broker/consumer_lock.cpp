#include "broker/consumer_lock.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/lua_files.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

std::string holder_of(const reply& r) {
  if (r->type != REDIS_REPLY_STRING)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to the consumer lock script");
  return reply_text(*r);
}

} // namespace

consumer_lock::consumer_lock(connection& conn, std::string key)
    : consumer_lock(conn, key, key + ".processes") {}

consumer_lock::consumer_lock(connection& conn, std::string key,
                             std::string processes)
    : conn_(conn), key_(std::move(key)), processes_(std::move(processes)),
      acquire_(lua_source(
          {lua_files::consumer_lock_note, lua_files::consumer_lock_acquire})),
      renew_(lua_source(
          {lua_files::consumer_lock_note, lua_files::consumer_lock_renew})),
      release_(lua_source({lua_files::consumer_lock_release})) {}

std::string consumer_lock::acquire(const std::string& token,
                                   std::int64_t ttl_ms) {
  return holder_of(
      acquire_.run(conn_, {key_, processes_}, {token, std::to_string(ttl_ms)}));
}

std::string consumer_lock::renew(const std::string& token,
                                 std::int64_t ttl_ms) {
  return holder_of(
      renew_.run(conn_, {key_, processes_}, {token, std::to_string(ttl_ms)}));
}

void consumer_lock::release(const std::string& token) {
  release_.run(conn_, {key_, processes_}, {token});
}

} // namespace outbox::broker
