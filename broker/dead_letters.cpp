#include "broker/dead_letters.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letter_script.hpp"
#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace outbox::broker {

namespace {

/// Which records the request picks, or why it cannot be done.
replay_result plan(const std::vector<dead_letter>& letters, const keys& names,
                   const replay_request& request) {
  replay_result result;
  auto pick = [&](const dead_letter& d) {
    result.replayed.push_back({d, names.queue_for(*d.aggregate_id)});
  };
  if (request.all) {
    for (const auto& d : letters) {
      if (d.replayable())
        pick(d);
      else
        result.skipped.push_back(
            {d.event_id.value_or(""), d.index, d.not_replayable});
    }
    return result;
  }
  std::set<std::string> named(request.event_ids.begin(),
                              request.event_ids.end());
  std::map<std::string, std::size_t> matches;
  for (const auto& d : letters) {
    if (!d.event_id || named.count(*d.event_id) == 0)
      continue;
    ++matches[*d.event_id];
    if (d.replayable())
      pick(d);
    else
      result.refused.push_back({*d.event_id, d.index, d.not_replayable});
  }
  // In the order given, each once.
  std::set<std::string> reported;
  for (const auto& id : request.event_ids)
    if (matches.count(id) == 0 && reported.insert(id).second)
      result.refused.push_back(
          {id, std::nullopt, "no record of the dead-letter list has it"});
  if (!result.refused.empty())
    result.replayed.clear();
  return result;
}

/// One script call; false when the list changed since it was read.
bool apply(connection& conn, lua_script& script, const keys& names,
           const std::vector<replayed_entry>& picked) {
  std::vector<std::string> script_keys{names.dead_letter, names.seq_gaps()};
  std::map<std::string, std::size_t> slot; // queue -> its pair number
  std::vector<std::string> args;
  args.reserve(picked.size() * 4);
  for (const auto& p : picked) {
    auto [at, added] = slot.emplace(p.queue, slot.size() + 1);
    if (added) {
      script_keys.push_back(p.queue);
      script_keys.push_back(names.doorbell_for(p.queue));
    }
    args.push_back(p.letter.record);
    args.push_back(p.letter.entry);
    args.push_back(std::to_string(at->second));
    // A replayable record's entry has both (dead_letter::not_replayable).
    args.push_back(*p.letter.aggregate_id + ":" +
                   std::to_string(p.letter.seq.value_or(0)));
  }
  auto r = script.run(conn, script_keys, args);
  return dead_letter_script_done(*r, picked.size(), "replay");
}

} // namespace

std::vector<dead_letter> read_dead_letters(connection& conn,
                                           const keys& names) {
  auto r = conn.command({"LRANGE", names.dead_letter, "0", "-1"});
  if (r->type != REDIS_REPLY_ARRAY)
    throw broker_error(broker_errc::rejected, "unexpected reply to LRANGE");
  std::vector<dead_letter> letters;
  letters.reserve(r->elements);
  for (std::size_t i = 0; i < r->elements; ++i)
    letters.push_back(parse_dead_letter(i, reply_text(*r->element[i])));
  return letters;
}

replay_result replay_dead_letters(connection& conn, const keys& names,
                                  const replay_request& request) {
  auto script = dead_letter_script(lua_files::dead_letter_replay);
  for (int attempt = 1;; ++attempt) {
    auto result = plan(read_dead_letters(conn, names), names, request);
    if (result.replayed.empty() || apply(conn, script, names, result.replayed))
      return result;
    if (attempt == max_dead_letter_attempts)
      throw_dead_letters_kept_changing("replay", "replayed",
                                       result.replayed.size());
  }
}

} // namespace outbox::broker
