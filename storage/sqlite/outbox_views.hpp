#pragma once

#include "storage/outbox_views.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>

namespace outbox::storage::sqlite {

/// The operator's views of the SQLite outbox table: counts, FAILED rows,
/// retries. Prepares only their statements.
class outbox_views : public storage::outbox_views {
public:
  /// Prepares the statements on `db`, which must outlive the views and be
  /// used by one thread at a time. Throws store_error(schema) when the
  /// database is not initialised.
  explicit outbox_views(SQLite::Database& db);
  ~outbox_views() override;
  outbox_views(const outbox_views&) = delete;
  outbox_views& operator=(const outbox_views&) = delete;

  std::vector<std::string> retry(const std::vector<std::string>& event_ids,
                                 millis now) override;
  int retry_all_failed(millis now) override;
  outbox_stats stats(millis now) override;
  bool has_pending_or_sending() override;
  std::optional<std::int64_t> change_mark() override;
  failed_page failed_rows(std::int64_t after_rowid, int limit) override;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace outbox::storage::sqlite
