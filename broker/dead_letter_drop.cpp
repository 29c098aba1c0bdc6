#include "broker/dead_letter_drop.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letters.hpp"
#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"
#include "broker/sha1.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace outbox::broker {

namespace {

/// How many times a drop is planned again after the list changed under it.
constexpr int max_drop_attempts = 5;

const std::string& drop_script_source() {
  static const std::string source =
      lua_source({lua_files::wrong_key_type, lua_files::dead_letter_drop});
  return source;
}

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
  lua_script script{drop_script_source()};
  auto r =
      script.run(conn, {names.dead_letter, names.dead_letter_dropped()}, args);
  if (r->type == REDIS_REPLY_INTEGER &&
      static_cast<std::size_t>(r->integer) == plan.records())
    return true;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
      reply_text(*r->element[0]) == "changed")
    return false;
  throw broker_error(broker_errc::rejected,
                     "unexpected reply from the dead-letter drop script");
}

drop_plan drop_dead_letters(connection& conn, const keys& names,
                            const drop_request& request) {
  for (int attempt = 1;; ++attempt) {
    auto plan = plan_drop(read_dead_letters(conn, names), request);
    if (plan.decisions.empty() || apply_drop(conn, names, plan, request.reason))
      return plan;
    if (attempt == max_drop_attempts)
      throw broker_error(
          broker_errc::rejected,
          "the dead-letter list kept changing under the drop (" +
              text::plural(static_cast<std::int64_t>(plan.records()),
                           "record") +
              " to drop); nothing was dropped, try again");
  }
}

} // namespace outbox::broker
