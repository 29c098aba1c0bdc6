#include "broker/applied_record.hpp"

#include <nlohmann/json.hpp>

namespace outbox::broker {

std::optional<applied_record> parse_applied_record(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("aggregate_id") || !j.contains("seq") ||
      !j["aggregate_id"].is_string() || !j["seq"].is_number_integer())
    return std::nullopt;
  applied_record r;
  r.aggregate_id = j["aggregate_id"].get<std::string>();
  r.seq = j["seq"].get<std::int64_t>();
  if (j.contains("event_type") && j["event_type"].is_string())
    r.event_type = j["event_type"].get<std::string>();
  if (j.contains("sku") && j["sku"].is_string())
    r.sku = j["sku"].get<std::string>();
  if (j.contains("qty") && j["qty"].is_number_integer())
    r.qty = j["qty"].get<std::int64_t>();
  if (j.contains("at") && j["at"].is_number_integer())
    r.at = j["at"].get<std::int64_t>();
  return r;
}

} // namespace outbox::broker
