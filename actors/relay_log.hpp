#pragma once

// The relay's log lines: the rows a line is about, FAILED rows, and the
// beginning and end of a Redis or database outage as one relay sees it.

#include "actors/relay_context.hpp"
#include "storage/types.hpp"

#include <string>
#include <vector>

namespace outbox::actors {

/// "e1 (order-1 #1), e2 (order-1 #2) and 3 more": the rows a line is about.
std::string describe_rows(const std::vector<storage::claimed_event>& events);

/// The rows of `c` whose event_id is in `ids`, in claim order.
std::vector<storage::claimed_event>
rows_named(const storage::claim& c, const std::vector<std::string>& ids);

/// One line per row that became FAILED: rare, and each needs an operator.
void log_failed(const std::string& relay, const storage::failed_row& row);

/// Redis answered: ends an outage the relay saw, with one line.
void redis_answered(relay_context& relay);

/// The database answered: ends an outage the relay saw, with one line.
void database_answered(relay_context& relay);

/// Database trouble: warn once per outage, the retries at debug.
void database_failed(relay_context& relay, const char* when, const char* what);

} // namespace outbox::actors
