#include "cli/failed_row_json.hpp"

namespace outbox::cli {

nlohmann::json failed_row_json(const storage::failed_row& row) {
  return {{"event_id", row.event_id}, {"aggregate_id", row.aggregate_id},
          {"seq", row.seq},           {"event_type", row.event_type},
          {"attempts", row.attempts}, {"last_error", row.last_error}};
}

} // namespace outbox::cli
