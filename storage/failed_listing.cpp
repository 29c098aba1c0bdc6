#include "storage/failed_listing.hpp"

#include "storage/outbox_views.hpp"

namespace outbox::storage {

std::vector<failed_row> all_failed_rows(outbox_views& views, int page_size) {
  std::vector<failed_row> rows;
  std::int64_t after = 0;
  for (;;) {
    auto page = views.failed_rows(after, page_size);
    rows.insert(rows.end(), page.rows.begin(), page.rows.end());
    // A short page is the last one.
    if (static_cast<int>(page.rows.size()) < page_size)
      return rows;
    after = page.last_rowid;
  }
}

} // namespace outbox::storage
