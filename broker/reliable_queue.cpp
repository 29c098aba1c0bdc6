#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/key_scan.hpp"
#include "broker/lua_files.hpp"
#include "broker/sha1.hpp"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <stdexcept>
#include <utility>

namespace outbox::broker {

namespace {

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
      oversized_(std::move(oversized)),
      pop_batch_script_(
          lua_source({lua_files::wrong_key_type, lua_files::fence_refusal,
                      lua_files::dead_letter_record, lua_files::pop_batch})),
      remove_batch_script_(
          lua_source({lua_files::fence_refusal, lua_files::remove_batch})),
      recover_script_(
          lua_source({lua_files::wrong_key_type, lua_files::fence_refusal,
                      lua_files::recover})) {}

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
