#pragma once

#include "storage/order_store.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>

namespace outbox::storage::sqlite {

/// Orders, request keys and outbox rows in SQLite: each call one BEGIN
/// IMMEDIATE transaction.
class order_store final : public storage::order_store {
public:
  /// Prepares the store's statements on `db`, which must outlive the store
  /// and be used by one thread at a time. Throws store_error(schema) when
  /// the database is not initialised.
  explicit order_store(SQLite::Database& db);
  ~order_store() override;
  order_store(const order_store&) = delete;
  order_store& operator=(const order_store&) = delete;

  std::vector<placed_order>
  place_orders(const std::vector<order_request>& requests, millis now) override;
  std::vector<appended_event>
  append_events(const std::vector<event_request>& requests,
                millis now) override;
  void set_before_commit(std::function<void()> hook) override;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace outbox::storage::sqlite
