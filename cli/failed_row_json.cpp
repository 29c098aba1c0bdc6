#include "cli/failed_row_json.hpp"

namespace outbox::cli {

nlohmann::json failed_row_json(const storage::failed_row& row) {
  // The stores hold headers as a JSON object's text (checked when it was
  // written); anything else shows as none rather than failing the list.
  auto headers = nlohmann::json::parse(row.headers, nullptr, false);
  if (!headers.is_object())
    headers = nlohmann::json::object();
  return {{"event_id", row.event_id},
          {"aggregate_id", row.aggregate_id},
          {"seq", row.seq},
          {"event_type", row.event_type},
          {"attempts", row.attempts},
          {"last_error", row.last_error},
          {"headers", std::move(headers)}};
}

} // namespace outbox::cli
