#include "broker/command_access.hpp"

#include "broker/command_refusal.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <set>
#include <utility>

namespace outbox::broker {

namespace {

using argv = std::vector<std::string>;

/// A SHA-1 no script has: EVALSHA is checked, never run.
const std::string probe_sha(40, '0');

/// What the relays send: RPUSH and the doorbells for one list, the script
/// for several (broker/publisher.cpp), and loading it; WAIT after each
/// push when they `wait_for_replicas` (redis.min_replica_acks): refused, it
/// would hold every push back as an outage, pushed again and again.
std::vector<argv> relay_commands(const keys& names, bool wait_for_replicas) {
  std::vector<argv> commands;
  if (wait_for_replicas)
    commands.push_back({"WAIT", "0", "0"});
  argv script{"EVALSHA", probe_sha, "0"};
  std::vector<std::string> bells;
  for (std::size_t i = 0; i < names.partitions; ++i) {
    auto queue = names.partition(i);
    auto bell = names.doorbell_for(queue);
    commands.push_back({"RPUSH", queue, "probe"});
    commands.push_back({"TYPE", queue});
    commands.push_back({"LPUSH", bell, "1"});
    commands.push_back({"LTRIM", bell, "0", "0"});
    script.push_back(queue);
    bells.push_back(bell);
  }
  script.insert(script.end(), bells.begin(), bells.end());
  script[2] = std::to_string(script.size() - 3);
  commands.push_back(std::move(script));
  commands.push_back({"SCRIPT", "LOAD", "return 1"});
  // The heartbeat of the process running them (broker/relay_presence.cpp).
  auto notes = names.relay_processes();
  std::vector<argv> heartbeat{{"EVALSHA", probe_sha, "1", notes},
                              {"TYPE", notes},
                              {"TIME"},
                              {"HGET", notes, "probe"},
                              {"HSET", notes, "probe", "1"},
                              {"HGETALL", notes},
                              {"HDEL", notes, "probe"},
                              {"PEXPIRE", notes, "1"}};
  commands.insert(commands.end(), heartbeat.begin(), heartbeat.end());
  return commands;
}

/// What the consumers and their coordinator send: their scripts on each
/// key (broker/lua/: pop_batch, remove_batch, recover, inbox_*,
/// consumer_lock_*, fence_refusal) and every command those scripts call, the
/// doorbells they block on, and the recovery's SCAN for processing lists.
std::vector<argv> consumer_commands(const keys& names) {
  std::vector<argv> commands;
  auto queue = names.partition(0);
  auto processing = names.processing_for(queue, "probe");
  auto lock = names.consumer_lock();
  auto notes = names.consumer_processes();
  auto gaps = names.seq_gaps();
  std::vector<std::string> keyed{
      processing,     names.processed,   names.reserved, names.aggregate_seq,
      names.counters, names.dead_letter, gaps,           lock,
      notes};
  for (std::size_t i = 0; i < names.partitions; ++i) {
    auto list = names.partition(i);
    keyed.push_back(list);
    commands.push_back({"BLPOP", names.doorbell_for(list), "0"});
  }
  for (const auto& key : keyed)
    commands.push_back({"EVALSHA", probe_sha, "1", key});
  std::vector<argv> called{
      {"LMOVE", queue, processing, "LEFT", "RIGHT"},
      {"LRANGE", processing, "0", "0"},
      {"LLEN", queue},
      {"LREM", processing, "0", "probe"},
      {"LTRIM", processing, "0", "0"},
      {"RPUSH", names.dead_letter, "probe"},
      {"LPOS", names.dead_letter, "probe"},
      {"HSETNX", names.processed, "probe", "1"},
      {"HSET", names.processed, "probe", "1"},
      {"HEXISTS", names.processed, "probe"},
      {"HGET", names.processed, "probe"},
      {"HDEL", names.processed, "probe"},
      {"HINCRBY", names.reserved, "probe", "1"},
      {"HINCRBY", names.counters, "probe", "1"},
      {"HSET", names.aggregate_seq, "probe", "1"},
      {"HGET", names.aggregate_seq, "probe"},
      {"HSET", gaps, "probe", "1"},
      {"HEXISTS", gaps, "probe"},
      {"HDEL", gaps, "probe"},
      {"GET", lock},
      {"SET", lock, "probe"},
      {"PEXPIRE", lock, "1"},
      {"DEL", lock},
      {"HSET", notes, "probe", "1"},
      {"HGET", notes, "probe"},
      {"HDEL", notes, "probe"},
      {"HGETALL", notes},
      {"PEXPIRE", notes, "1"},
      {"TYPE", notes},
      {"TIME"},
      {"SCAN", "0", "MATCH", names.processing_prefix + "*"},
  };
  commands.insert(commands.end(), called.begin(), called.end());
  return commands;
}

/// "RPUSH pipeline:outbox.events.0": the command and its first key (or
/// argument), enough to find the rule that refuses it.
std::string shown(const argv& command) {
  std::string text = command.front();
  // EVALSHA's first argument is the script, its key comes after the count.
  std::size_t key = command.front() == "EVALSHA" ? 3 : 1;
  if (command.size() > key)
    text += " " + command[key];
  return text;
}

} // namespace

const char* to_string(pipeline_side side) {
  return side == pipeline_side::relays ? "relays" : "consumers";
}

std::vector<refused_command> refused_commands(connection& conn,
                                              const keys& names, bool relays,
                                              bool consumers) {
  std::vector<std::pair<argv, pipeline_side>> asked;
  if (relays)
    for (auto& command :
         relay_commands(names, conn.options().min_replica_acks > 0))
      asked.emplace_back(std::move(command), pipeline_side::relays);
  if (consumers)
    for (auto& command : consumer_commands(names))
      asked.emplace_back(std::move(command), pipeline_side::consumers);
  std::vector<refused_command> refused;
  if (asked.empty())
    return refused;
  // MULTI is tried alone first: were it refused, the commands sent after
  // it would run for real (a probe pushed onto a queue, the consumers' lock
  // taken). Then nothing can be asked, and nothing is said. The commands
  // go in the same round trip as their own MULTI, on one connection.
  // DISCARD refused would leave the connection inside MULTI, every later
  // command on it only queued: then it is dropped (the next call
  // reconnects) and nothing is asked either.
  auto out_of_multi = [&conn](const std::vector<reply>& replies) {
    if (replies.back()->type != REDIS_REPLY_ERROR)
      return true;
    conn.reset();
    return false;
  };
  auto tried = conn.pipeline({{"MULTI"}, {"DISCARD"}});
  if (!out_of_multi(tried) || tried.front()->type == REDIS_REPLY_ERROR)
    return refused;
  std::vector<argv> batch{{"MULTI"}};
  for (const auto& [command, side] : asked)
    batch.push_back(command);
  batch.push_back({"DISCARD"});
  auto replies = conn.pipeline(batch);
  if (!out_of_multi(replies) || replies.front()->type == REDIS_REPLY_ERROR)
    return refused;
  std::set<std::pair<std::string, std::string>> said;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const auto& r = *replies[i + 1];
    if (r.type != REDIS_REPLY_ERROR)
      continue;
    const auto& [command, side] = asked[i];
    auto words = reply_text(r);
    // A replica (READONLY), a full Redis (OOM), one loading...: states,
    // checked at queueing time too, that waiting ends. Only a refusal of
    // the command itself is this probe's to name.
    if (!refuses_the_command(words))
      continue;
    if (said.insert({command.front(), words}).second)
      refused.push_back({shown(command), side, words});
  }
  return refused;
}

std::string describe(const std::vector<refused_command>& refused,
                     std::size_t most) {
  std::string text;
  for (std::size_t i = 0; i < refused.size() && i < most; ++i) {
    if (i > 0)
      text += "; ";
    text += refused[i].command + " (" + to_string(refused[i].needed_by) +
            "): " + refused[i].words;
  }
  if (refused.size() > most)
    text += "; and " + std::to_string(refused.size() - most) + " more";
  return text;
}

} // namespace outbox::broker
