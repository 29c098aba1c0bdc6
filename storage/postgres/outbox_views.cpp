#include "storage/postgres/outbox_views.hpp"

#include "storage/event_ids.hpp"
#include "storage/postgres/arrays.hpp"
#include "storage/postgres/session.hpp"
#include "storage/types.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <set>

namespace outbox::storage::postgres {

std::vector<std::string>
outbox_views::retry(const std::vector<std::string>& event_ids, millis now) {
  // Text that is no UUID names no row: not retried, like an unknown id.
  std::vector<std::string> ids;
  for (const auto& id : event_ids)
    if (is_event_id(id))
      ids.push_back(id);
  std::set<std::string> retried;
  if (!ids.empty()) {
    auto done = link_.run("retry", "retry", {text_array(ids), link_.time(now)});
    for (int r = 0; r < done.rows(); ++r)
      retried.insert(done.text(r, 0));
  }
  // PostgreSQL answers a uuid in lower case, whatever case it was given.
  std::vector<std::string> missed;
  for (const auto& id : event_ids) {
    auto lower = id;
    for (auto& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (retried.count(lower) == 0)
      missed.push_back(id);
  }
  return missed;
}

int outbox_views::retry_all_failed(millis now) {
  auto done = link_.run("retry", "retry_all_failed", {link_.time(now)});
  return static_cast<int>(done.int64(0, 0));
}

failed_page outbox_views::failed_rows(std::int64_t after_rowid, int limit) {
  failed_page page;
  auto rows = link_.run("failed", "failed_page",
                        {std::to_string(after_rowid), std::to_string(limit)});
  for (int r = 0; r < rows.rows(); ++r) {
    page.rows.push_back({rows.text(r, 1), rows.text(r, 2), rows.int64(r, 3),
                         rows.text(r, 4), static_cast<int>(rows.int64(r, 5)),
                         rows.text(r, 6), rows.text(r, 7)});
    page.last_rowid = rows.int64(r, 0);
  }
  return page;
}

outbox_stats outbox_views::stats(millis now) {
  // One snapshot, no lock: REPEATABLE READ, read only.
  return link_.transaction(
      "stats",
      [&] {
        outbox_stats s;
        auto counts = link_.run("stats", "stats_counts", {link_.time(now)});
        s.set_count(row_status::pending, counts.int64(0, 0));
        s.set_count(row_status::sending, counts.int64(0, 1));
        s.set_count(row_status::failed, counts.int64(0, 2));
        s.set_count(row_status::published, counts.int64(0, 3));
        s.orders = counts.int64(0, 4);
        s.oldest_unpublished_age = counts.int64(0, 5);
        s.expired_leases = counts.int64(0, 6);
        auto owners = link_.run("stats", "leases_by_owner", {});
        for (int r = 0; r < owners.rows(); ++r)
          s.leases.push_back(
              {owners.text(r, 0), static_cast<int>(owners.int64(r, 1)),
               owners.int64(r, 2), owners.int64(r, 3),
               owners.null(r, 4) ? std::nullopt
                                 : std::optional<millis>{owners.int64(r, 4)}});
        s.failed = failed_rows(0, 100).rows;
        return s;
      },
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

std::optional<std::int64_t> outbox_views::change_mark() {
  try {
    auto mark = link_.run("stats", "change_mark", {});
    if (!mark.null(0, 0))
      return mark.int64(0, 0);
  } catch (const store_error& e) {
    // The statistics functions revoked from PUBLIC on a hardened server:
    // the run counts instead. An outage shows in the read that follows.
    spdlog::debug("no change mark: {}", e.what());
  }
  return std::nullopt;
}

bool outbox_views::has_pending_or_sending() {
  auto any = link_.run("stats", "pending_or_sending", {});
  return any.text(0, 0) == "t";
}

} // namespace outbox::storage::postgres
