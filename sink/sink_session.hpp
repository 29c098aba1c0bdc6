#pragma once

// What a sink backend does, one primitive at a time; batch_apply.cpp
// makes the protocol of sink.hpp from them, the same on every backend.

#include "sink/sink.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace outbox::sink {

/// Thrown by run_statement() when the statement failed for the event's own
/// sake: the batch goes on without that event.
class statement_refused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The inbox table, the same text on both backends.
extern const char* const inbox_schema;

/// A page of applied_before, the same text on both backends but for the
/// placeholders: consumer, before, after's applied_at and event_id, limit.
extern const char* const page_sql;

class sink_session {
public:
  virtual ~sink_session() = default;
  /// Each throws sink_unavailable unless it says otherwise.
  /// Runs `body` in one transaction: committed when it returns, rolled
  /// back when it throws (what it threw goes on). Throws statement_refused
  /// when the COMMIT is refused for the data's sake (a deferred
  /// constraint).
  virtual void transaction(const std::function<void()>& body) = 0;
  virtual void savepoint() = 0;
  virtual void release_savepoint() = 0;
  /// Throws statement_refused when the transaction is gone (a statement
  /// that ended it): the caller's transaction fails with it.
  virtual void roll_back_to_savepoint() = 0;
  /// Inserts the event's inbox row unless it is there: whether it was new.
  virtual bool insert_row(const std::string& consumer, const sink_event& event,
                          std::int64_t now_ms) = 0;
  /// insert_row for each event, in order (a repeat is not new); a backend
  /// may do it in one statement.
  virtual std::vector<bool> insert_rows(const std::string& consumer,
                                        const std::vector<sink_event>& events,
                                        std::int64_t now_ms) {
    std::vector<bool> fresh;
    fresh.reserve(events.size());
    for (const auto& event : events)
      fresh.push_back(insert_row(consumer, event, now_ms));
    return fresh;
  }
  /// Runs one statement for `event`. Throws statement_refused for the
  /// event's own fault, sink_unavailable else.
  virtual void run_statement(const sql_statement& statement,
                             const sink_event& event) = 0;
  virtual std::vector<inbox_row> applied_before(const std::string& consumer,
                                                std::int64_t before_ms,
                                                const inbox_row* after,
                                                std::size_t limit) = 0;
  virtual std::size_t forget(const std::string& consumer,
                             const std::vector<std::string>& event_ids) = 0;
  /// Prepares `statement` without running it. Throws statement_refused
  /// when the sink refuses it (its syntax, a table it lacks).
  virtual void prepare(const sql_statement& statement) = 0;
  /// After `statement` was refused (its event's savepoint rolled back):
  /// whether it still prepares. False when a table or column it names went
  /// since the start, the operator's to put back, not the event's fault.
  virtual bool prepares(const sql_statement& statement) = 0;
};

/// The sink of sink.hpp over a backend's session.
std::unique_ptr<sink> make_sink(std::unique_ptr<sink_session> session,
                                std::string consumer, sql_effects effects);

} // namespace outbox::sink
