#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/key_scan.hpp"
#include "broker/sha1.hpp"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <stdexcept>
#include <utility>

namespace outbox::broker {

namespace {

/// Moves up to ARGV[1] entries, head first, to the processing list's tail,
/// stopping before the batch would pass ARGV[2] bytes (one entry at least).
/// One LMOVE per entry keeps every step O(1) and never copies entries
/// beyond the cap into the script (LRANGE would, up to 256 MiB for a batch
/// of 1 MiB entries); the one entry that overshoots goes straight back to
/// the queue's head, so order is kept. Atomic: nobody sees half a batch.
///
/// An entry over ARGV[4] bytes (broker.max_consume_bytes, at or above what
/// the relays publish: someone pushed it by hand, or a relay ran with a
/// publishing limit above it) is never returned: it is
/// dropped from the processing list's tail with LTRIM (RPOP would copy it
/// again) and dead-lettered with at most ARGV[5] bytes of it and its size.
/// The script holds it once in memory (no command reads a list item's length
/// without its value); the consumer never sees it. It counts in the batch's
/// entries and bytes, so one call sets aside one huge entry, not a queue of
/// them.
const std::string& pop_batch_source() {
  static const std::string source = lua_key_type_check() + lua_fence_check() +
                                    lua_dead_letter_record() +
                                    std::string{R"lua(
-- KEYS[1]: the queue, KEYS[2]: the processing list, KEYS[3]: the
-- consumers' lock, KEYS[4]: the dead-letter list, KEYS[5]: the counters.
-- ARGV: max entries, max bytes, the fence's holder ('' for none), the
-- largest entry handed over (0: no limit), how much of a bigger one the
-- dead-letter record keeps.
-- Returns {entries, sizes of the entries set aside}.
local refusal = fence_refusal(KEYS[3], ARGV[3])
if refusal then
  return refusal
end
local max_entries, max_bytes = tonumber(ARGV[1]), tonumber(ARGV[2])
local max_consume_bytes, max_kept = tonumber(ARGV[4]), tonumber(ARGV[5])
if max_consume_bytes > 0 then
  -- Scripts are not rolled back: check before the first move.
  local wrong = wrong_key_type({{KEYS[4], 'list'}, {KEYS[5], 'hash'}})
  if wrong then
    return wrong
  end
end
local moved, oversized, bytes = {}, {}, 0
while #moved + #oversized < max_entries do
  local entry = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not entry then break end
  if max_consume_bytes > 0 and #entry > max_consume_bytes then
    redis.call('LTRIM', KEYS[2], 0, -2)
    redis.call('RPUSH', KEYS[4], dead_letter_record(entry,
      'entry is ' .. #entry .. ' bytes, over broker.max_consume_bytes ('
        .. max_consume_bytes .. ')', max_kept))
    redis.call('HINCRBY', KEYS[5], 'dead_lettered', 1)
    oversized[#oversized + 1] = #entry
    bytes = bytes + #entry
    if bytes > max_bytes then break end
  else
    if #moved + #oversized > 0 and bytes + #entry > max_bytes then
      redis.call('LMOVE', KEYS[2], KEYS[1], 'RIGHT', 'LEFT')
      break
    end
    bytes = bytes + #entry
    moved[#moved + 1] = entry
  end
end
return {moved, oversized}
)lua"};
  return source;
}

/// Removes each applied entry's oldest copy, in order: what LREM 1 per
/// entry would do one call at a time, but the entries are named by their
/// SHA-1, not sent back whole (an entry may be up to
/// broker.max_consume_bytes). Not LTRIM by count alone: that is only right
/// when the list starts with this batch, and after a lost reply or a
/// recovery that raced us it may hold more in front (or less). So LTRIM
/// only once the head is seen to be the batch, entry by entry (the normal
/// case); else find each in the list and LREM it by the value read here.
const std::string& remove_batch_source() {
  static const std::string source = lua_fence_check() + std::string{R"lua(
-- KEYS[1]: the processing list, KEYS[2]: the consumers' lock. ARGV: the
-- fence's holder ('' for none), then the applied entries' SHA-1 (hex),
-- oldest first.
local refusal = fence_refusal(KEYS[2], ARGV[1])
if refusal then
  return refusal
end
local count = #ARGV - 1
local head = redis.call('LRANGE', KEYS[1], 0, count - 1)
local is_head = #head == count
for i = 1, #head do
  if not is_head then break end
  is_head = redis.sha1hex(head[i]) == ARGV[i + 1]
end
if is_head then
  redis.call('LTRIM', KEYS[1], count, -1)
  return count
end
local list = redis.call('LRANGE', KEYS[1], 0, -1)
local digests, taken = {}, {}
local removed = 0
for i = 2, #ARGV do
  for j = 1, #list do
    if not taken[j] then
      digests[j] = digests[j] or redis.sha1hex(list[j])
      if digests[j] == ARGV[i] then
        -- The first copy of this value not yet taken is its oldest left.
        redis.call('LREM', KEYS[1], 1, list[j])
        taken[j] = true
        removed = removed + 1
        break
      end
    end
  end
end
return removed
)lua"};
  return source;
}

/// Moves the processing list back to the head of the queue: taking from its
/// tail and pushing on the queue's head keeps the original order. Bounded by
/// the length read first, so it cannot spin.
///
/// Counts the entries it moves in the counters' `recovered`, in the same
/// script: read_stats compares it before and after its reads, because an
/// entry moved back (and popped again into a list its scan missed) between
/// them would be counted nowhere.
const std::string& recover_source() {
  static const std::string source =
      lua_key_type_check() + lua_fence_check() + std::string{R"lua(
-- KEYS[1]: the processing list, KEYS[2]: the queue, KEYS[3]: the
-- consumers' lock, KEYS[4]: the counters. ARGV[1]: the fence's holder (''
-- for none).
local refusal = fence_refusal(KEYS[3], ARGV[1])
if refusal then
  return refusal
end
local count = redis.call('LLEN', KEYS[1])
if count == 0 then
  return 0
end
-- Scripts are not rolled back: count before the first move, so that no
-- move goes uncounted (a counter that refuses stops the script here).
local wrong = wrong_key_type({{KEYS[4], 'hash'}})
if wrong then
  return wrong
end
redis.call('HINCRBY', KEYS[4], 'recovered', count)
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

std::optional<std::string> moved_entry(const redisReply& r) {
  if (r.type == REDIS_REPLY_NIL)
    return std::nullopt;
  if (r.type != REDIS_REPLY_STRING)
    throw broker_error(broker_errc::rejected, "unexpected reply to LMOVE");
  return reply_text(r);
}

} // namespace

reliable_queue::reliable_queue(connection& conn, fence fenced_by,
                               oversized_entries oversized)
    : conn_(conn), fence_(std::move(fenced_by)),
      oversized_(std::move(oversized)), pop_batch_script_(pop_batch_source()),
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
  // Without a limit the two keys are placeholders the script ignores.
  bool limited = oversized_.max_consume_bytes > 0;
  auto r = pop_batch_script_.run(conn_,
                                 {queue, processing, lock_key(queue),
                                  limited ? oversized_.dead_letter : queue,
                                  limited ? oversized_.counters : queue},
                                 {std::to_string(max_entries),
                                  std::to_string(max_bytes), fence_.holder,
                                  std::to_string(oversized_.max_consume_bytes),
                                  std::to_string(oversized_.max_kept)});
  auto unexpected = [] {
    return broker_error(broker_errc::rejected, "unexpected reply to pop_batch");
  };
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
      r->element[0]->type != REDIS_REPLY_ARRAY ||
      r->element[1]->type != REDIS_REPLY_ARRAY)
    throw unexpected();
  const auto& moved = *r->element[0];
  const auto& set_aside = *r->element[1];
  std::vector<std::string> entries;
  entries.reserve(moved.elements);
  for (std::size_t i = 0; i < moved.elements; ++i) {
    if (moved.element[i]->type != REDIS_REPLY_STRING)
      throw unexpected();
    entries.push_back(reply_text(*moved.element[i]));
  }
  for (std::size_t i = 0; i < set_aside.elements; ++i) {
    if (set_aside.element[i]->type != REDIS_REPLY_INTEGER)
      throw unexpected();
    set_aside_.push_back(
        static_cast<std::size_t>(set_aside.element[i]->integer));
  }
  return entries;
}

std::vector<std::size_t> reliable_queue::take_set_aside() {
  return std::exchange(set_aside_, {});
}

void reliable_queue::remove(const std::string& processing,
                            const std::string& entry) {
  remove_batch(processing, {entry});
}

std::size_t
reliable_queue::remove_batch(const std::string& processing,
                             const std::vector<std::string>& entries) {
  if (entries.empty())
    return 0;
  std::vector<std::string> digests;
  digests.reserve(entries.size());
  for (const auto& entry : entries)
    digests.push_back(sha1_hex(entry));
  auto r =
      remove_batch_script_.run(conn_, {processing, lock_key(processing)},
                               {fence_.holder}, digests.begin(), digests.end());
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to remove_batch");
  return static_cast<std::size_t>(r->integer);
}

std::size_t reliable_queue::recover(const std::string& processing,
                                    const std::string& queue,
                                    const std::string& counters) {
  if (processing == queue)
    throw std::invalid_argument("recover: the processing list is the queue");
  auto r = recover_script_.run(
      conn_, {processing, queue, lock_key(queue), counters}, {fence_.holder});
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0)
    throw broker_error(broker_errc::rejected, "unexpected reply to recover");
  return static_cast<std::size_t>(r->integer);
}

std::vector<std::string>
reliable_queue::processing_lists(const std::string& prefix) {
  return scan_prefix(conn_, prefix, "list");
}

} // namespace outbox::broker
