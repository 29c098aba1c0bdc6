#include "broker/consumer_lock.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

/// Notes in the processes hash (KEYS[2]) that the process of token ARGV[1]
/// is `role` ("consuming" or "standby"), since when (kept while the role
/// stays), until when the note holds (now + the lock's ttl), when it was
/// seen (now: a heartbeat, which `outbox status` finds stale long before
/// the note runs out), and the expiry again: earlier versions read it
/// third (status) and last (this script's pruning); drops the
/// notes of processes that stopped renewing theirs. Redis's clock, so every
/// process and `outbox status` read one time. It never fails the lock: a
/// hash it cannot write (a full Redis, a key of another type) only goes
/// without the note.
const char* note_source = R"lua(
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
)lua";

/// Take when free (or already ours: a retry after a lost reply); answer the
/// holder either way.
const char* acquire_body = R"lua(
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if not current or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  note(KEYS[2], ARGV[1], 'consuming', ARGV[2])
  return ARGV[1]
end
note(KEYS[2], ARGV[1], 'standby', ARGV[2])
return current
)lua";

/// Extend only when ours; answer the holder ('' when nobody).
const char* renew_body = R"lua(
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV: token, ttl in ms.
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  note(KEYS[2], ARGV[1], 'consuming', ARGV[2])
end
return current or ''
)lua";

/// Delete only when ours: a late release must not free a successor's lock.
/// The process's note goes either way: it stops waiting too.
const char* release_source = R"lua(
-- KEYS[1]: the lock, KEYS[2]: the processes. ARGV[1]: token.
local process = string.match(ARGV[1], '^(.*)#[^#]*$') or ARGV[1]
if redis.call('TYPE', KEYS[2]).ok == 'hash' then
  redis.pcall('HDEL', KEYS[2], process)
end
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
    : consumer_lock(conn, key, key + ".processes") {}

consumer_lock::consumer_lock(connection& conn, std::string key,
                             std::string processes)
    : conn_(conn), key_(std::move(key)), processes_(std::move(processes)),
      acquire_(std::string{note_source} + acquire_body),
      renew_(std::string{note_source} + renew_body), release_(release_source) {}

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
