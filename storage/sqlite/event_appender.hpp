#pragma once

// Appending an event inside a write transaction someone else opened: the
// order store's own (order_store.cpp), or an application's that embeds the
// outbox next to its business rows (embed/outbox/append.hpp).

#include "storage/event_ids.hpp"
#include "storage/order_store.hpp"
#include "storage/sqlite_fwd.hpp"
#include "storage/trace_context.hpp"

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>

namespace outbox::storage::sqlite {

class event_appender {
public:
  /// Prepares its statements on `db`, which must outlive it. Throws
  /// SQLite::Exception (a database without the outbox's tables).
  explicit event_appender(SQLite::Database& db);

  /// Appends one (valid) event; its seq follows the aggregate's last,
  /// which the caller's write transaction keeps from moving until COMMIT.
  /// An event_id that exists writes nothing and returns that row
  /// (replayed); the same id for another aggregate or type throws
  /// store_error(invalid_input). Throws SQLite::Exception.
  appended_event append(const event_request& request, millis now);

  /// A new event of the store's own (an order's OrderPlaced): its id made
  /// here, its headers (valid, "" for none) given a traceparent unless
  /// they have one.
  struct new_event {
    std::string event_id;
    /// Of the traceparent it was written with.
    std::string trace_id;
  };
  new_event append_new(const std::string& aggregate_id, const std::string& type,
                       const std::string& payload, const std::string& headers,
                       millis now);

private:
  std::int64_t allocate_seq(const std::string& aggregate_id);
  std::optional<appended_event> find_appended(const event_request& request,
                                              const std::string& event_id);
  void insert(const std::string& event_id, const std::string& aggregate_id,
              std::int64_t seq, const std::string& type,
              const std::string& payload, const std::string& headers,
              millis now);

  SQLite::Statement next_seq_;
  SQLite::Statement insert_event_;
  SQLite::Statement find_event_;
  event_id_source event_ids_;
  trace_source traces_;
};

} // namespace outbox::storage::sqlite
