#pragma once

#include "storage/outbox_views.hpp"

namespace outbox::storage::postgres {

class session;

/// Counts, FAILED rows and retries on PostgreSQL.
class outbox_views final : public storage::outbox_views {
public:
  explicit outbox_views(session& link) : link_(link) {}

  std::vector<std::string> retry(const std::vector<std::string>& event_ids,
                                 millis now) override;
  int retry_all_failed(millis now) override;
  outbox_stats stats(millis now) override;
  bool has_pending_or_sending() override;
  std::optional<std::int64_t> change_mark() override;
  failed_page failed_rows(std::int64_t after_rowid, int limit) override;

private:
  session& link_;
};

} // namespace outbox::storage::postgres
