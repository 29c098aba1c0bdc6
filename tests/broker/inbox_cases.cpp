#include "tests/broker/inbox_cases.hpp"

#include "broker/entry.hpp"
#include "tests/broker/event_entries.hpp"

#include <nlohmann/json.hpp>

#include <utility>

namespace outbox::test {

namespace {

using json = nlohmann::json;
using outcome = broker::applied_entry::outcome;

const char* const unknown_version =
    "v must be 1 (the queue entry version this consumer reads) or absent";
const char* const bad_event_id =
    "event_id must be a non-empty string of at most 128 bytes";
const char* const bad_seq = "seq must be an integer >= 1 (at most 2^53)";
const char* const bad_payload = "payload must be a JSON object";
const char* const bad_headers = "headers must be a JSON object of strings";
/// Why the built-in effect (effects/orders.lua) sets an OrderPlaced aside.
std::string refused_order(const std::string& why) {
  return "effect failed: builtin:orders: OrderPlaced: " + why;
}
const std::string bad_sku =
    refused_order("payload.sku must be a non-empty string");
const std::string bad_qty =
    refused_order("payload.qty must be an integer >= 1 (at most 2^53)");

std::string text_reason(const std::string& field) {
  return field + " must be UTF-8 text without control characters";
}

/// An OrderPlaced entry as a relay publishes it.
json order_placed(const std::string& event_id, const std::string& aggregate,
                  std::int64_t seq, const std::string& sku, std::int64_t qty) {
  return json::parse(order_placed_event(event_id, aggregate, seq, sku, qty));
}

/// A follow-up entry: no effect, only a place in its aggregate's order.
json follow_up(const std::string& event_id, const std::string& aggregate,
               std::int64_t seq) {
  auto j = order_placed(event_id, aggregate, seq, "A", 1);
  j["event_type"] = "OrderPaid";
  j["payload"] = {{"amount_cents", 100}};
  return j;
}

/// The entry every malformed case starts from.
json good() {
  return order_placed("e1", "order-1", 1, "A", 1);
}

std::string with(const char* field, json value) {
  auto j = good();
  j[field] = std::move(value);
  return j.dump();
}

std::string without(const char* field) {
  auto j = good();
  j.erase(field);
  return j.dump();
}

std::string payload_with(const char* field, json value) {
  auto j = good();
  j["payload"][field] = std::move(value);
  return j.dump();
}

/// The good entry with raw bytes in a field ("payload.sku" or a top-level
/// one): nlohmann will not write bytes that are not UTF-8, cjson reads them
/// as they are.
std::string raw(const std::string& field, const std::string& bytes) {
  auto j = good();
  if (field == "payload.sku")
    j["payload"]["sku"] = "@RAW@";
  else
    j[field] = "@RAW@";
  auto text = j.dump();
  text.replace(text.find("@RAW@"), 5, bytes);
  return text;
}

inbox_case dead(std::string name, std::string entry, std::string reason) {
  return {std::move(name),
          {{std::move(entry), outcome::dead_lettered, std::move(reason), false,
            ""}},
          {}};
}

std::vector<inbox_case> malformed_cases() {
  return {
      dead("not_json", "not json", "entry is not valid JSON"),
      dead("empty", "", "entry is not valid JSON"),
      dead("cut_short", "{\"event_id\":", "entry is not valid JSON"),
      dead("null", "null", "entry must be a JSON object"),
      dead("number", "42", "entry must be a JSON object"),
      dead("array", "[1,2,3]", "entry must be a JSON object"),
      // A format newer than this consumer reads (an older one has no v).
      dead("newer_version", with("v", 2), unknown_version),
      dead("version_as_text", with("v", "1"), unknown_version),
      dead("null_version", with("v", nullptr), unknown_version),
      dead("no_event_id", without("event_id"), bad_event_id),
      dead("null_event_id", with("event_id", nullptr), bad_event_id),
      dead("long_event_id", with("event_id", std::string(129, 'e')),
           bad_event_id),
      dead("empty_aggregate_id", with("aggregate_id", ""),
           "aggregate_id must be a non-empty string"),
      dead("number_aggregate_id", with("aggregate_id", 5),
           "aggregate_id must be a non-empty string"),
      dead("no_seq", without("seq"), bad_seq),
      dead("null_seq", with("seq", nullptr), bad_seq),
      dead("zero_seq", with("seq", 0), bad_seq),
      dead("fraction_seq", with("seq", 1.5), bad_seq),
      dead("text_seq", with("seq", "1"), bad_seq),
      dead("huge_seq", with("seq", 1e300), bad_seq),
      dead("null_event_type", with("event_type", nullptr),
           "event_type must be a non-empty string"),
      dead("payload_as_text", with("payload", "{}"), bad_payload),
      dead("null_payload", with("payload", nullptr), bad_payload),
      dead("array_payload", with("payload", json::array({1, 2})), bad_payload),
      dead("headers_as_text", with("headers", "{}"), bad_headers),
      dead("null_headers", with("headers", nullptr), bad_headers),
      dead("headers_with_a_number", with("headers", {{"tenant", 7}}),
           bad_headers),
      dead("headers_with_an_object",
           with("headers", {{"tenant", {{"id", "acme"}}}}), bad_headers),
      dead("text_published_at", with("published_at", "now"),
           "published_at must be an integer >= 0"),
  };
}

/// Well-formed OrderPlaced entries the built-in effect refuses: set aside.
std::vector<inbox_case> refused_order_cases() {
  return {
      dead("empty_sku", payload_with("sku", ""), bad_sku),
      dead("null_sku", payload_with("sku", nullptr), bad_sku),
      dead("zero_qty", payload_with("qty", 0), bad_qty),
      dead("text_qty", payload_with("qty", "2"), bad_qty),
      dead("fraction_qty", payload_with("qty", 2.5), bad_qty),
  };
}

/// Whether a case's raw bytes are UTF-8 (control characters, escaped or
/// not) or not (see inbox_step::decode_reason).
enum class text_bytes { utf8, not_utf8 };

/// The good entry with `bytes` in `field`, dead-lettered for the text.
inbox_case unclean(std::string name, const std::string& field,
                   const std::string& bytes,
                   text_bytes kind = text_bytes::utf8) {
  auto c = dead(std::move(name), raw(field, bytes), text_reason(field));
  if (kind == text_bytes::not_utf8)
    c.steps[0].decode_reason = "entry is not valid JSON";
  return c;
}

std::vector<inbox_case> unclean_text_cases() {
  const auto not_utf8 = text_bytes::not_utf8;
  return {
      unclean("event_id_not_utf8", "event_id", "ev\xff\x1b[2J", not_utf8),
      unclean("event_id_escape", "event_id", "ev\\u001b[2J"),
      unclean("event_id_delete", "event_id", "ev\\u007f"),
      unclean("event_id_c1_csi", "event_id", "ev\xc2\x9b"),
      unclean("event_id_c1_nel_escaped", "event_id", "ev\\u0085"),
      unclean("event_id_overlong", "event_id", "ev\xc0\xaf", not_utf8),
      unclean("event_id_surrogate", "event_id", "ev\xed\xa0\x80", not_utf8),
      unclean("event_id_cut_short", "event_id", "ev\xe2\x82", not_utf8),
      unclean("aggregate_id_not_utf8", "aggregate_id", "order\xfe", not_utf8),
      unclean("aggregate_id_newline", "aggregate_id", "order\\n1"),
      unclean("event_type_tab", "event_type", "OrderPlaced\\t"),
  };
}

/// The outcomes of a well-formed entry.
inbox_step applied(std::string entry, bool order_violation = false) {
  return {std::move(entry), outcome::applied, "", order_violation, ""};
}
inbox_step duplicate(std::string entry) {
  return {std::move(entry), outcome::duplicate, "", false, ""};
}

std::vector<inbox_case> well_formed_cases() {
  auto clean = good();
  // Text that is clean, if not ASCII, is applied.
  clean["event_id"] = "\xc3\xa9v\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0";
  auto older = good();
  older.erase("v"); // written before the format had a version
  auto e1 = order_placed("e1", "order-1", 1, "A", 2).dump();
  auto e2 = follow_up("e2", "order-1", 2).dump();
  auto e3 = follow_up("e3", "order-1", 3).dump();
  auto with_headers = good();
  with_headers["headers"] = {
      {"traceparent",
       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
      {"tenant", "acme"}};
  auto republished = json::parse(e1);
  republished["published_at"] = 1800000000000;
  return {
      {"order_placed_reserves", {applied(good().dump())}, {{"A", 1}}},
      {"clean_non_ascii_id_is_applied", {applied(clean.dump())}, {{"A", 1}}},
      {"entry_without_version_is_applied", {applied(older.dump())}, {{"A", 1}}},
      {"entry_with_headers_is_applied",
       {applied(with_headers.dump())},
       {{"A", 1}}},
      {"repeat_is_a_duplicate",
       {applied(e1), duplicate(e1), duplicate(republished.dump())},
       {{"A", 2}}},
      {"follow_ups_advance_in_order",
       {applied(e1), applied(e2), applied(e3)},
       {{"A", 2}}},
      {"a_jump_then_the_skipped_seq_are_violations",
       {applied(e1), applied(e3, true), applied(e2, true)},
       {{"A", 2}}},
      {"an_applied_seq_under_another_id_is_a_duplicate",
       {applied(e1), applied(e2),
        duplicate(follow_up("e9", "order-1", 1).dump())},
       {{"A", 2}}},
      // Past 1024 skipped seqs the gaps are not remembered one by one: a
      // late seq beyond them is applied, not taken for a duplicate.
      {"a_late_seq_past_the_remembered_gaps_is_applied",
       {applied(e1), applied(follow_up("e2000", "order-1", 2000).dump(), true),
        applied(follow_up("e1500", "order-1", 1500).dump(), true)},
       {{"A", 2}}},
      {"a_dead_letter_leaves_the_aggregate_as_it_was",
       {{with("seq", 0), outcome::dead_lettered, bad_seq, false, ""},
        applied(good().dump())},
       {{"A", 1}}},
      // A recovered copy of a malformed entry finds its record: one record,
      // the copy absorbed; other garbage still gets its own.
      {"a_copy_of_a_dead_lettered_entry_is_a_duplicate",
       {{with("seq", 0), outcome::dead_lettered, bad_seq, false, ""},
        duplicate(with("seq", 0)),
        {with("seq", -1), outcome::dead_lettered, bad_seq, false, ""},
        applied(good().dump())},
       {{"A", 1}}},
      // An order the effect refuses is set aside: its aggregate moves on
      // without it, and any copy of it, fixed or not, is a duplicate (a
      // replay applies it).
      {"a_refused_order_is_set_aside_and_its_aggregate_moves_on",
       {{payload_with("qty", 0), outcome::dead_lettered, bad_qty, false, ""},
        duplicate(payload_with("qty", 0)),
        duplicate(good().dump()),
        applied(follow_up("e2", "order-1", 2).dump())},
       {}},
      {"a_refused_sku_of_control_characters_is_set_aside",
       {{raw("payload.sku", "A\\u001b[31m"), outcome::dead_lettered,
         refused_order(text_reason("payload.sku")), false, ""}},
       {}},
      // Bytes that are not UTF-8: the script reads them (cjson) and the
      // effect refuses them; decode() does not read them as JSON.
      {"a_refused_sku_not_utf8_is_set_aside",
       {{raw("payload.sku", "A\xff"), outcome::dead_lettered,
         refused_order(text_reason("payload.sku")), false,
         "entry is not valid JSON"}},
       {}},
  };
}

} // namespace

const std::vector<inbox_case>& inbox_cases() {
  static const std::vector<inbox_case> all = [] {
    auto cases = malformed_cases();
    for (auto& more :
         {unclean_text_cases(), refused_order_cases(), well_formed_cases()})
      cases.insert(cases.end(), more.begin(), more.end());
    return cases;
  }();
  return all;
}

std::vector<inbox_step> dead_letter_steps() {
  std::vector<inbox_step> steps;
  const std::string refused = "effect failed: ";
  for (const auto& c : inbox_cases())
    if (c.steps.size() == 1 && c.steps[0].expected == outcome::dead_lettered &&
        c.steps[0].reason.compare(0, refused.size(), refused) != 0)
      steps.push_back(c.steps[0]);
  return steps;
}

} // namespace outbox::test
