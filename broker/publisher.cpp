#include "broker/publisher.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/lua_files.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

/// The entries of one list, in publish order.
struct list_batch {
  std::string list;
  std::vector<std::string> values;
};

std::vector<list_batch> group_by_list(const std::vector<event_entry>& entries,
                                      const keys& names) {
  std::vector<list_batch> batches;
  for (auto& entry : entries) {
    auto list = names.queue_for(entry.aggregate_id);
    auto i = batches.begin();
    while (i != batches.end() && i->list != list)
      ++i;
    if (i == batches.end())
      i = batches.insert(i, list_batch{std::move(list), {}});
    i->values.push_back(encode(entry));
    // Checked for every entry before any Redis call: a batch is refused
    // whole, and the relay then finds the oversized rows one by one.
    if (i->values.back().size() > names.max_entry_bytes)
      throw broker_error(
          broker_errc::rejected,
          "event " + entry.event_id + " is " +
              std::to_string(i->values.back().size()) +
              " bytes encoded, over broker.max_entry_bytes (" +
              std::to_string(names.max_entry_bytes) + "): not published",
          server_state::none, {}, {}, refusal_reason::entry_too_large);
  }
  return batches;
}

void expect_count(const redisReply& r, std::size_t expected) {
  if (r.type != REDIS_REPLY_INTEGER || r.integer < 0 ||
      static_cast<std::size_t>(r.integer) < expected)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to a publish (expected at least " +
                           std::to_string(expected) + " values pushed)");
}

} // namespace

publisher::publisher(connection& conn, keys names)
    : conn_(conn), names_(std::move(names)),
      push_script_(lua_source({lua_files::push_lists})) {}

void publisher::publish(const std::vector<event_entry>& entries) {
  if (entries.empty())
    return;
  auto batches = group_by_list(entries, names_);
  if (batches.size() == 1) {
    publish_encoded(batches.front().list, batches.front().values);
    return;
  }
  std::vector<std::string> lists;
  std::vector<std::string> args;
  args.reserve(batches.size() + entries.size());
  for (auto& batch : batches)
    lists.push_back(batch.list);
  for (auto& batch : batches)
    lists.push_back(names_.doorbell_for(batch.list));
  for (auto& batch : batches) {
    args.push_back(std::to_string(batch.values.size()));
    for (auto& value : batch.values)
      args.push_back(std::move(value));
  }
  auto r = push_script_.run(conn_, lists, args);
  // The script returns how many values it pushed, not a list length.
  if (r->type != REDIS_REPLY_INTEGER ||
      r->integer != static_cast<long long>(entries.size()))
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to a multi-list publish");
  wait_for_replicas();
}

void publisher::wait_for_replicas() {
  const auto& options = conn_.options();
  if (options.min_replica_acks <= 0)
    return;
  // WAIT covers every write this connection sent before it: the push.
  auto wanted = options.min_replica_acks;
  auto timeout = options.replica_ack_timeout_ms;
  reply r;
  try {
    r = conn_.blocking_command(
        {"WAIT", std::to_string(wanted), std::to_string(timeout)}, timeout);
  } catch (const broker_error& e) {
    // Refused ("WAIT cannot be used with replica instances" from a master
    // demoted since the push, an ACL without WAIT): the push went through
    // unconfirmed, which is never the rows' fault.
    if (e.code() != broker_errc::rejected)
      throw;
    // A demoted master: under Sentinel, ask them again at the next push.
    auto demoted = e.words().find("replica") != std::string::npos;
    if (demoted && options.sentinel)
      conn_.reset();
    throw broker_error(
        broker_errc::unavailable,
        std::string{e.what()} + " (redis.min_replica_acks: the push is not "
                                "acknowledged)",
        demoted ? server_state::read_only : e.state(), e.where(), e.words());
  }
  if (r->type != REDIS_REPLY_INTEGER)
    throw broker_error(broker_errc::unavailable, "unexpected reply to WAIT");
  if (r->integer >= wanted)
    return;
  // An outage, not the rows' fault: the relay hands them back uncharged
  // and pushes them again (a duplicate the inbox absorbs).
  auto where = options.where.to_string();
  // Under Sentinel a master its replicas left may be one the sentinels
  // promoted around (woken from a freeze, cut off): the next push asks
  // them again rather than go on writing where a resync will wipe it.
  if (options.sentinel)
    conn_.reset();
  throw broker_error(broker_errc::unavailable,
                     "Redis at " + where + ": " + std::to_string(r->integer) +
                         " of the " + std::to_string(wanted) +
                         " replicas redis.min_replica_acks asks for had the "
                         "push within " +
                         std::to_string(timeout) + " ms",
                     server_state::replicas_behind, where);
}

void publisher::publish_encoded(const std::string& list,
                                const std::vector<std::string>& encoded) {
  if (encoded.empty())
    return;
  std::vector<std::string> push;
  push.reserve(2 + encoded.size());
  push.emplace_back("RPUSH");
  push.push_back(list);
  push.insert(push.end(), encoded.begin(), encoded.end());
  // One round trip: the push, then the doorbell (a hint whose replies are
  // not checked: a wrong-typed doorbell only costs a consumer its wake-up).
  auto doorbell = names_.doorbell_for(list);
  std::vector<std::vector<std::string>> commands;
  commands.push_back(std::move(push));
  commands.push_back({"LPUSH", doorbell, "1"});
  commands.push_back({"LTRIM", doorbell, "0", "0"});
  auto replies = conn_.pipeline(commands);
  throw_if_error(*replies.front(), "RPUSH", &conn_.options().where);
  // RPUSH answers the list's new length: at least what we pushed.
  expect_count(*replies.front(), encoded.size());
  wait_for_replicas();
}

} // namespace outbox::broker
