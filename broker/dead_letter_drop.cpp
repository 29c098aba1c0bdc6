#include "broker/dead_letter_drop.hpp"

#include "broker/connection.hpp"
#include "broker/dead_letter_script.hpp"
#include "broker/dead_letters.hpp"
#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"
#include "broker/sha1.hpp"
#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace outbox::broker {

namespace {

/// `text` cut to at most `limit` bytes without splitting a UTF-8 sequence
/// (continuation bytes are 10xxxxxx).
std::string utf8_prefix(const std::string& text, std::size_t limit) {
  if (text.size() <= limit)
    return text;
  auto cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return text.substr(0, cut);
}

/// A decision's value without its opening brace: the script puts
/// `{"dropped_at":N,` before it.
std::string decision_body(const drop_decision& d, const std::string& reason) {
  const auto& first = d.records.front();
  auto named = first.event_id && !first.event_id->empty();
  nlohmann::json value{
      {"reason", reason},
      {"event_id",
       named ? nlohmann::json(*first.event_id) : nlohmann::json(nullptr)},
      {"records", d.records.size()},
      {"record_bytes", first.record.size()},
      {"record_cut", first.record.size() > max_evidence_bytes},
      {"record", utf8_prefix(first.record, max_evidence_bytes)}};
  return text::json_text(value).substr(1);
}

} // namespace

std::size_t drop_plan::records() const {
  std::size_t total = 0;
  for (const auto& d : decisions)
    total += d.records.size();
  return total;
}

std::string malformed_field(const std::string& record) {
  return "malformed:" + sha1_hex(record);
}

drop_plan plan_drop(const std::vector<dead_letter>& letters,
                    const drop_request& request) {
  drop_plan plan;
  std::set<std::string> named(request.event_ids.begin(),
                              request.event_ids.end());
  std::map<std::string, std::size_t> at; // field -> its decision
  for (const auto& d : letters) {
    std::string field;
    if (d.event_id && !d.event_id->empty()) {
      if (named.count(*d.event_id) == 0)
        continue;
      field = *d.event_id;
    } else if (request.malformed) {
      field = malformed_field(d.record);
    } else {
      continue;
    }
    auto [slot, added] = at.emplace(field, plan.decisions.size());
    if (added)
      plan.decisions.push_back({field, {}});
    plan.decisions[slot->second].records.push_back(d);
  }
  // In the order given, each once.
  std::set<std::string> reported;
  for (const auto& id : request.event_ids)
    if (at.count(id) == 0 && reported.insert(id).second)
      plan.unknown.push_back(id);
  if (!plan.unknown.empty())
    plan.decisions.clear();
  return plan;
}

bool apply_drop(connection& conn, const keys& names, const drop_plan& plan,
                const std::string& reason) {
  std::vector<std::string> args{std::to_string(plan.decisions.size())};
  // Identical records (two copies dead-lettered alike) are interchangeable:
  // the script checks and removes each text as many times as planned.
  std::vector<std::string> texts;
  std::map<std::string, std::size_t> copies;
  for (const auto& d : plan.decisions) {
    args.push_back(d.field);
    args.push_back(decision_body(d, reason));
    for (const auto& r : d.records)
      if (copies[r.record]++ == 0)
        texts.push_back(r.record);
  }
  for (const auto& text : texts) {
    args.push_back(text);
    args.push_back(std::to_string(copies[text]));
  }
  auto script = dead_letter_script(lua_files::dead_letter_drop);
  auto r =
      script.run(conn, {names.dead_letter, names.dead_letter_dropped()}, args);
  return dead_letter_script_done(*r, plan.records(), "drop");
}

drop_plan drop_dead_letters(connection& conn, const keys& names,
                            const drop_request& request) {
  for (int attempt = 1;; ++attempt) {
    auto plan = plan_drop(read_dead_letters(conn, names), request);
    if (plan.decisions.empty() || apply_drop(conn, names, plan, request.reason))
      return plan;
    if (attempt == max_dead_letter_attempts)
      throw_dead_letters_kept_changing("drop", "dropped", plan.records());
  }
}

} // namespace outbox::broker
