#pragma once

// A FAILED row as JSON, the same object in `outbox failed --json` and in
// `outbox status --json`'s "failed" list.

#include "storage/lease_records.hpp"

#include <nlohmann/json.hpp>

namespace outbox::cli {

/// event_id, aggregate_id, seq, event_type, attempts and last_error, whole.
nlohmann::json failed_row_json(const storage::failed_row& row);

} // namespace outbox::cli
