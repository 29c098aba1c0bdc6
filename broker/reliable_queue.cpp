#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <set>
#include <stdexcept>

namespace outbox::broker {

namespace {

/// Moves the processing list back to the head of the queue: taking from its
/// tail and pushing on the queue's head keeps the original order. Bounded by
/// the length read first, so it cannot spin.
const char* recover_source = R"lua(
-- KEYS[1]: the processing list, KEYS[2]: the queue.
local count = redis.call('LLEN', KEYS[1])
for _ = 1, count do
  redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
end
return count
)lua";

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

reliable_queue::reliable_queue(connection& conn)
    : conn_(conn), recover_script_(recover_source) {}

std::optional<std::string> reliable_queue::pop(const std::string& queue,
                                               const std::string& processing,
                                               int timeout_ms) {
  // BLMOVE with timeout 0 would block forever: "do not wait" is LMOVE.
  if (timeout_ms <= 0)
    return moved_entry(
        *conn_.command({"LMOVE", queue, processing, "LEFT", "RIGHT"}));
  return moved_entry(*conn_.blocking_command(
      {"BLMOVE", queue, processing, "LEFT", "RIGHT", seconds(timeout_ms)},
      timeout_ms));
}

std::vector<std::string>
reliable_queue::pop_batch(const std::string& queue,
                          const std::string& processing, std::size_t max) {
  std::vector<std::vector<std::string>> commands(
      max, {"LMOVE", queue, processing, "LEFT", "RIGHT"});
  auto replies = conn_.pipeline(commands);
  std::vector<std::string> entries;
  // A producer may push between two LMOVEs, so an entry can follow a nil:
  // keep every moved entry, or one would sit unseen in `processing`.
  for (auto& r : replies) {
    throw_if_error(*r, "LMOVE");
    if (auto entry = moved_entry(*r))
      entries.push_back(std::move(*entry));
  }
  return entries;
}

void reliable_queue::remove(const std::string& processing,
                            const std::string& entry) {
  // The processing list is in pop order, so counting from the head removes
  // the oldest copy should the same text have been delivered twice.
  conn_.command({"LREM", processing, "1", entry});
}

std::size_t reliable_queue::recover(const std::string& processing,
                                    const std::string& queue) {
  if (processing == queue)
    throw std::invalid_argument("recover: the processing list is the queue");
  auto r = recover_script_.run(conn_, {processing, queue}, {});
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
