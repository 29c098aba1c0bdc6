#pragma once

// Every FAILED row (`outbox failed`), read page by page through
// outbox_views::failed_rows, whatever database holds them.

#include "storage/lease_records.hpp"

#include <vector>

namespace outbox::storage {

class outbox_views;

/// Rows per page read from the database.
inline constexpr int failed_page_size = 500;

/// Every FAILED row, oldest first, read `page_size` rows at a time. Throws
/// store_error.
std::vector<failed_row> all_failed_rows(outbox_views& views,
                                        int page_size = failed_page_size);

} // namespace outbox::storage
