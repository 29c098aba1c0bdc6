#pragma once

#include "storage/retention_store.hpp"

namespace outbox::storage::postgres {

class session;

/// Purge batches on PostgreSQL: one statement each (protocol/5_retention.sql,
/// purge).
class retention_store final : public storage::retention_store {
public:
  explicit retention_store(session& link) : link_(link) {}

  purge_batch purge_published(millis cutoff, std::int64_t after_rowid,
                              int limit) override;

private:
  session& link_;
};

} // namespace outbox::storage::postgres
