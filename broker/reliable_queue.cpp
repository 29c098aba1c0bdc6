#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace outbox::broker {

namespace {

/// Moves up to ARGV[1] entries, head first, to the processing list's tail,
/// stopping before the batch would pass ARGV[2] bytes (one entry at least).
/// One LMOVE per entry keeps every step O(1) and never copies entries
/// beyond the cap into the script (LRANGE would, up to 256 MiB for a batch
/// of 1 MiB entries); the one entry that overshoots goes straight back to
/// the queue's head, so order is kept. Atomic: nobody sees half a batch.
const std::string& pop_batch_source() {
  static const std::string source = lua_fence_check() + std::string{R"lua(
-- KEYS[1]: the queue, KEYS[2]: the processing list, KEYS[3]: the
-- consumers' lock. ARGV: max entries, max bytes, the fence's holder ('' for
-- none).
local refusal = fence_refusal(KEYS[3], ARGV[3])
if refusal then
  return refusal
end
local max_entries, max_bytes = tonumber(ARGV[1]), tonumber(ARGV[2])
local moved, bytes = {}, 0
while #moved < max_entries do
  local entry = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not entry then break end
  if #moved > 0 and bytes + #entry > max_bytes then
    redis.call('LMOVE', KEYS[2], KEYS[1], 'RIGHT', 'LEFT')
    break
  end
  bytes = bytes + #entry
  moved[#moved + 1] = entry
end
return moved
)lua"};
  return source;
}

/// Removes each entry's oldest copy, in order: exactly what LREM 1 per
/// entry would do one call at a time. Not LTRIM by count alone: that is only
/// right when the list starts with this batch, and after a lost reply or a
/// recovery that raced us it may hold more in front (or less). So LTRIM
/// only once the head is seen to be the batch, entry by entry (the normal
/// case, two calls for the batch); else LREM each.
const std::string& remove_batch_source() {
  static const std::string source = lua_fence_check() + std::string{R"lua(
-- KEYS[1]: the processing list, KEYS[2]: the consumers' lock. ARGV: the
-- fence's holder ('' for none), then the applied entries, oldest first.
local refusal = fence_refusal(KEYS[2], ARGV[1])
if refusal then
  return refusal
end
local count = #ARGV - 1
local head = redis.call('LRANGE', KEYS[1], 0, count - 1)
local is_head = #head == count
for i = 1, #head do
  if not is_head then break end
  is_head = head[i] == ARGV[i + 1]
end
if is_head then
  redis.call('LTRIM', KEYS[1], count, -1)
  return count
end
local removed = 0
for i = 2, #ARGV do
  removed = removed + redis.call('LREM', KEYS[1], 1, ARGV[i])
end
return removed
)lua"};
  return source;
}

/// Moves the processing list back to the head of the queue: taking from its
/// tail and pushing on the queue's head keeps the original order. Bounded by
/// the length read first, so it cannot spin.
const std::string& recover_source() {
  static const std::string source = lua_fence_check() + std::string{R"lua(
-- KEYS[1]: the processing list, KEYS[2]: the queue, KEYS[3]: the
-- consumers' lock. ARGV[1]: the fence's holder ('' for none).
local refusal = fence_refusal(KEYS[3], ARGV[1])
if refusal then
  return refusal
end
local count = redis.call('LLEN', KEYS[1])
for _ = 1, count do
  redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
end
return count
)lua"};
  return source;
}

/// BLMOVE's timeout in seconds, as a decimal ("0.25").
std::string seconds(int timeout_ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%d.%03d", timeout_ms / 1000,
                timeout_ms % 1000);
  return text;
}

/// A SCAN MATCH pattern that matches `prefix` literally, then anything.
std::string prefix_pattern(const std::string& prefix) {
  std::string pattern;
  for (char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
      pattern += '\\';
    pattern += c;
  }
  pattern += '*';
  return pattern;
}

std::optional<std::string> moved_entry(const redisReply& r) {
  if (r.type == REDIS_REPLY_NIL)
    return std::nullopt;
  if (r.type != REDIS_REPLY_STRING)
    throw broker_error(broker_errc::rejected, "unexpected reply to LMOVE");
  return reply_text(r);
}

} // namespace

reliable_queue::reliable_queue(connection& conn, fence fenced_by)
    : conn_(conn), fence_(std::move(fenced_by)),
      pop_batch_script_(pop_batch_source()),
      remove_batch_script_(remove_batch_source()),
      recover_script_(recover_source()) {}

const std::string&
reliable_queue::lock_key(const std::string& placeholder) const {
  // Without a fence the lock key is only a placeholder the script ignores.
  return fence_.active() ? fence_.lock : placeholder;
}

std::optional<std::string> reliable_queue::pop(const std::string& queue,
                                               const std::string& processing,
                                               int timeout_ms) {
  if (fence_.active())
    throw std::logic_error("pop: a blocking move cannot carry the fence; a "
                           "fenced consumer pops with pop_batch");
  // BLMOVE with timeout 0 would block forever: "do not wait" is LMOVE.
  if (timeout_ms <= 0)
    return moved_entry(
        *conn_.command({"LMOVE", queue, processing, "LEFT", "RIGHT"}));
  return moved_entry(*conn_.blocking_command(
      {"BLMOVE", queue, processing, "LEFT", "RIGHT", seconds(timeout_ms)},
      timeout_ms));
}

bool reliable_queue::wait_for_doorbell(
    const std::vector<std::string>& doorbells, int timeout_ms) {
  if (doorbells.empty() || timeout_ms <= 0)
    return false;
  std::vector<std::string> argv{"BLPOP"};
  argv.insert(argv.end(), doorbells.begin(), doorbells.end());
  argv.push_back(seconds(timeout_ms));
  auto r = conn_.blocking_command(argv, timeout_ms);
  return r->type != REDIS_REPLY_NIL;
}

std::vector<std::string>
reliable_queue::pop_batch(const std::string& queue,
                          const std::string& processing,
                          std::size_t max_entries, std::size_t max_bytes) {
  if (processing == queue)
    throw std::invalid_argument("pop_batch: the processing list is the queue");
  if (max_entries == 0)
    return {};
  auto r = pop_batch_script_.run(
      conn_, {queue, processing, lock_key(queue)},
      {std::to_string(max_entries), std::to_string(max_bytes), fence_.holder});
  if (r->type != REDIS_REPLY_ARRAY)
    throw broker_error(broker_errc::rejected, "unexpected reply to pop_batch");
  std::vector<std::string> entries;
  entries.reserve(r->elements);
  for (std::size_t i = 0; i < r->elements; ++i) {
    if (r->element[i]->type != REDIS_REPLY_STRING)
      throw broker_error(broker_errc::rejected,
                         "unexpected reply to pop_batch");
    entries.push_back(reply_text(*r->element[i]));
  }
  return entries;
}

void reliable_queue::remove(const std::string& processing,
                            const std::string& entry) {
  // Fenced, the batch script does the same removal after the lock check.
  if (fence_.active()) {
    remove_batch(processing, {entry});
    return;
  }
  // The processing list is in pop order, so counting from the head removes
  // the oldest copy should the same text have been delivered twice.
  conn_.command({"LREM", processing, "1", entry});
}

std::size_t
reliable_queue::remove_batch(const std::string& processing,
                             const std::vector<std::string>& entries) {
  if (entries.empty())
    return 0;
  auto r =
      remove_batch_script_.run(conn_, {processing, lock_key(processing)},
                               {fence_.holder}, entries.begin(), entries.end());
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to remove_batch");
  return static_cast<std::size_t>(r->integer);
}

std::size_t reliable_queue::recover(const std::string& processing,
                                    const std::string& queue) {
  if (processing == queue)
    throw std::invalid_argument("recover: the processing list is the queue");
  auto r = recover_script_.run(conn_, {processing, queue, lock_key(queue)},
                               {fence_.holder});
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0)
    throw broker_error(broker_errc::rejected, "unexpected reply to recover");
  return static_cast<std::size_t>(r->integer);
}

std::vector<std::string>
reliable_queue::processing_lists(const std::string& prefix) {
  std::set<std::string> found; // SCAN may return a key more than once
  auto pattern = prefix_pattern(prefix);
  std::string cursor = "0";
  do {
    auto r = conn_.command(
        {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", "list"});
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
      throw broker_error(broker_errc::rejected, "unexpected reply to SCAN");
    cursor = reply_text(*r->element[0]);
    auto& keys = *r->element[1];
    for (std::size_t i = 0; i < keys.elements; ++i)
      found.insert(reply_text(*keys.element[i]));
  } while (cursor != "0" && !cursor.empty());
  return {found.begin(), found.end()};
}

} // namespace outbox::broker
