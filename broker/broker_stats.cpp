#include "broker/broker_stats.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/recovery_lists.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>

namespace outbox::broker {

namespace {

std::int64_t integer_of(const reply& r, const char* what) {
  throw_if_error(*r, what);
  if (r->type != REDIS_REPLY_INTEGER)
    throw broker_error(broker_errc::rejected,
                       std::string{"unexpected reply to "} + what);
  return r->integer;
}

/// The answer to HGET <counters> recovered: 0 before any recovery.
std::int64_t recovered_in(const redisReply& reply) {
  throw_if_error(reply, "HGET");
  return reply.type == REDIS_REPLY_STRING
             ? std::strtoll(reply_text(reply).c_str(), nullptr, 10)
             : 0;
}

} // namespace

std::int64_t broker_stats::queued_total() const {
  std::int64_t total = 0;
  for (auto& [name, length] : queues)
    total += length;
  return total;
}

std::int64_t broker_stats::processing_total() const {
  std::int64_t total = 0;
  for (auto& [name, length] : processing)
    total += length;
  return total;
}

std::int64_t broker_stats::counter(const std::string& name) const {
  auto found = counters.find(name);
  return found == counters.end() ? 0 : found->second;
}

std::int64_t read_recovered(connection& conn, const keys& names) {
  return recovered_in(*conn.command({"HGET", names.counters, "recovered"}));
}

broker_stats read_stats(connection& conn, const keys& names) {
  // The queues first, then the processing lists, each entry in flight is
  // in one of them: a consumer pops from a queue into a processing list
  // (which may be new, and so missing from a scan that began before), so a
  // queue read after the scan could miss an entry that moved between. The
  // only way back, recovery, counts in `recovered` in the same script: a
  // change across the reads says the counts may miss one (not settled).
  std::vector<std::string> queues;
  auto partitions = names.partitions <= 1 ? 1 : names.partitions;
  for (std::size_t i = 0; i < partitions; ++i)
    queues.push_back(names.partition(i));
  std::vector<std::vector<std::string>> first{
      {"HGET", names.counters, "recovered"}};
  for (auto& list : queues)
    first.push_back({"LLEN", list});
  auto before = conn.pipeline(first);
  auto recovered_before = recovered_in(*before[0]);
  broker_stats stats;
  for (std::size_t i = 0; i < queues.size(); ++i)
    stats.queues[queues[i]] = integer_of(before[i + 1], "LLEN");
  // Only the processing lists of configured queues: a foreign list under
  // the prefix is nobody's in-flight entries (recovery leaves it alone), so
  // a bounded run must not wait for it to empty.
  std::vector<std::string> processing;
  for (auto& [list, queue] : find_recovery_lists(conn, names).lists)
    processing.push_back(list);
  // One round trip: the processing lists, then the rest.
  std::vector<std::vector<std::string>> commands;
  for (auto& list : processing)
    commands.push_back({"LLEN", list});
  commands.push_back({"HLEN", names.processed});
  commands.push_back({"LLEN", names.dead_letter});
  commands.push_back({"HLEN", names.dead_letter_dropped()});
  commands.push_back({"HGETALL", names.counters});
  commands.push_back({"GET", names.consumer_lock()});
  commands.push_back({"PTTL", names.consumer_lock()});
  auto replies = conn.pipeline(commands);
  std::size_t at = 0;
  for (auto& list : processing) {
    // A list can empty between SCAN and LLEN: only non-empty ones count.
    if (auto length = integer_of(replies[at++], "LLEN"); length > 0)
      stats.processing[list] = length;
  }
  stats.processed = integer_of(replies[at++], "HLEN");
  stats.dead_letter = integer_of(replies[at++], "LLEN");
  stats.dead_letter_dropped = integer_of(replies[at++], "HLEN");
  auto& counters = replies[at++];
  throw_if_error(*counters, "HGETALL");
  if (counters->type != REDIS_REPLY_ARRAY)
    throw broker_error(broker_errc::rejected, "unexpected reply to HGETALL");
  for (std::size_t i = 0; i + 1 < counters->elements; i += 2)
    stats.counters[reply_text(*counters->element[i])] = std::strtoll(
        reply_text(*counters->element[i + 1]).c_str(), nullptr, 10);
  stats.settled = stats.counter("recovered") == recovered_before;
  auto& holder = replies[at++];
  if (holder->type == REDIS_REPLY_STRING)
    stats.consumers_holder = reply_text(*holder);
  else if (holder->type == REDIS_REPLY_ERROR) // a wrong-typed key
    stats.consumers_holder = "(" + names.consumer_lock() +
                             " unreadable: " + reply_text(*holder) + ")";
  // -2: no key; -1: no ttl, a lock nobody's renewal will ever end.
  stats.consumers_ttl_ms = integer_of(replies[at], "PTTL");
  return stats;
}

} // namespace outbox::broker
