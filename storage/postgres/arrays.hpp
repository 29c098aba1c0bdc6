#pragma once

// Array parameters in PostgreSQL's text form ("{a,b}"), so that a batch of
// leases is one statement with two arrays, not one statement per row.

#include "storage/lease_records.hpp"

#include <optional>
#include <string>
#include <vector>

namespace outbox::storage::postgres {

/// {"a","b"}: each element quoted, `"` and `\` escaped.
std::string text_array(const std::vector<std::string>& items);

/// The event ids and the epochs of `leases`, as two arrays that line up;
/// leases whose id is no UUID are left out (they name no row).
struct lease_arrays {
  std::string event_ids;
  std::string epochs;
};
lease_arrays to_arrays(const std::vector<event_lease>& leases);

/// As text_array, an absent item as NULL: {"a",NULL}.
std::string text_array(const std::vector<std::optional<std::string>>& items);

/// {1,2,3}
std::string integer_array(const std::vector<std::int64_t>& items);

} // namespace outbox::storage::postgres
