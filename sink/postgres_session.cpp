// The sink on PostgreSQL, over the outbox's own libpq session (it
// reconnects by itself after a restart; a call that finds the connection
// broken fails as busy, and the batch is tried again).

#include "sink/backends.hpp"
#include "sink/event_values.hpp"
#include "sink/sink_session.hpp"
#include "storage/postgres/session.hpp"

#include <set>

namespace outbox::sink {

namespace {

using storage::store_errc;
using storage::store_error;
using storage::postgres::param;

/// Whether the error passes by itself or with the operator's help (a lost
/// connection, a restart, a deadlock, missing privileges, a read-only
/// server), rather than being the event's fault.
bool passing(const store_error& e) {
  return e.code() == store_errc::busy || e.code() == store_errc::io;
}

/// The parameter as libpq's text: numbers and booleans in JSON's words,
/// which PostgreSQL's input functions read.
param text_of(const nlohmann::json& value) {
  if (value.is_null())
    return std::nullopt;
  if (value.is_string())
    return value.get<std::string>();
  return value.dump();
}

storage::db_options options_of(const sink_target& target) {
  storage::db_options options;
  options.path = target.location;
  options.busy_timeout_ms = target.busy_timeout_ms;
  return options;
}

/// Opens a session: sink_error when PostgreSQL refuses us for good,
/// sink_unavailable when it cannot be reached.
std::unique_ptr<storage::postgres::session> connect(const sink_target& target) {
  try {
    return std::make_unique<storage::postgres::session>(options_of(target));
  } catch (const store_error& e) {
    if (e.code() == store_errc::busy)
      throw sink_unavailable(std::string{"sink: "} + e.what());
    throw sink_error(std::string{"sink: "} + e.what());
  }
}

class postgres_session : public sink_session {
public:
  explicit postgres_session(const sink_target& target)
      : session_(connect(target)) {
    bool there = false;
    guarded([&] {
      there = session_
                  ->exec("open sink",
                         "SELECT to_regclass('outbox_inbox') IS NOT NULL")
                  .boolean(0, 0);
    });
    if (!there)
      throw sink_error("sink " + session_->where() +
                       " has no outbox_inbox table: create it with `outbox "
                       "init --sink URI`");
  }

  void transaction(const std::function<void()>& body) override {
    try {
      // A constraint the user deferred fails at COMMIT: statement_refused,
      // and the batch is applied one event per transaction to find it.
      session_->transaction("sink batch", body);
    } catch (const store_error& e) {
      // The body's own failures arrive converted; a store_error is from
      // BEGIN or COMMIT.
      refuse(e);
    }
  }

  void savepoint() override { exec("SAVEPOINT event"); }
  void release_savepoint() override { exec("RELEASE SAVEPOINT event"); }
  void roll_back_to_savepoint() override {
    exec("ROLLBACK TO SAVEPOINT event");
  }

  bool insert_row(const std::string& consumer, const sink_event& event,
                  std::int64_t now_ms) override {
    bool inserted = false;
    guarded([&] {
      inserted = session_
                     ->query("sink inbox row",
                             "INSERT INTO outbox_inbox (consumer, event_id,"
                             " aggregate_id, seq, event_type, applied_at)"
                             " VALUES ($1, $2, $3, $4, $5, $6)"
                             " ON CONFLICT DO NOTHING",
                             {consumer, event.event_id, event.aggregate_id,
                              std::to_string(event.seq), event.event_type,
                              std::to_string(now_ms)})
                     .affected() == 1;
    });
    return inserted;
  }

  std::vector<bool> insert_rows(const std::string& consumer,
                                const std::vector<sink_event>& events,
                                std::int64_t now_ms) override {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& event : events)
      rows.push_back({{"event_id", event.event_id},
                      {"aggregate_id", event.aggregate_id},
                      {"seq", event.seq},
                      {"event_type", event.event_type}});
    std::set<std::string> inserted;
    guarded([&] {
      auto answer = session_->query(
          "sink inbox rows",
          "INSERT INTO outbox_inbox (consumer, event_id, aggregate_id, seq,"
          " event_type, applied_at)"
          " SELECT $1, e.event_id, e.aggregate_id, e.seq, e.event_type, $2"
          " FROM jsonb_to_recordset($3::jsonb) AS"
          "  e(event_id text, aggregate_id text, seq bigint, event_type text)"
          " ON CONFLICT DO NOTHING RETURNING event_id",
          {consumer, std::to_string(now_ms),
           rows.dump(-1, ' ', false,
                     nlohmann::json::error_handler_t::replace)});
      for (int i = 0; i < answer.rows(); ++i)
        inserted.insert(answer.text(i, 0));
    });
    // A repeat within the batch: only its first copy is new.
    std::vector<bool> fresh;
    fresh.reserve(events.size());
    for (const auto& event : events)
      fresh.push_back(inserted.erase(event.event_id) == 1);
    return fresh;
  }

  void run_statement(const sql_statement& statement,
                     const sink_event& event) override {
    std::vector<param> params;
    params.reserve(statement.parameters.size());
    for (const auto& name : statement.parameters)
      params.push_back(text_of(parameter_value(event, name)));
    try {
      session_->query("effect", statement.postgres, params);
    } catch (const store_error& e) {
      refuse(e);
    }
  }

  std::vector<inbox_row> applied_before(const std::string& consumer,
                                        std::int64_t before_ms,
                                        const inbox_row* after,
                                        std::size_t limit) override {
    std::vector<inbox_row> rows;
    guarded([&] {
      auto answer = session_->query(
          "sink trim", page_sql,
          {consumer, std::to_string(before_ms),
           std::to_string(after ? after->applied_at : -1),
           after ? after->event_id : std::string{}, std::to_string(limit)});
      for (int i = 0; i < answer.rows(); ++i)
        rows.push_back({answer.text(i, 0), answer.text(i, 1),
                        answer.int64(i, 2), answer.int64(i, 3)});
    });
    return rows;
  }

  std::size_t forget(const std::string& consumer,
                     const std::vector<std::string>& event_ids) override {
    std::size_t deleted = 0;
    auto ids = nlohmann::json(event_ids).dump();
    guarded([&] {
      deleted = static_cast<std::size_t>(
          session_
              ->query("sink trim",
                      "DELETE FROM outbox_inbox WHERE consumer = $1 AND"
                      " event_id IN (SELECT jsonb_array_elements_text($2))",
                      {consumer, ids})
              .affected());
    });
    return deleted;
  }

  void prepare(const sql_statement& statement) override {
    try {
      session_->exec("effect",
                     "PREPARE outbox_sink_check AS " + statement.postgres);
      session_->exec("effect", "DEALLOCATE outbox_sink_check");
    } catch (const store_error& e) {
      // At start a missing table is the file's to name, not an outage.
      if (passing(e))
        throw sink_unavailable(std::string{"sink: "} + e.what());
      throw statement_refused(e.database_said().empty() ? e.what()
                                                        : e.database_said());
    }
  }

  bool prepares(const sql_statement& statement) override {
    try {
      prepare(statement);
      return true;
    } catch (const statement_refused&) {
      return false;
    }
  }

private:
  /// An effect's statement failed: the sink's trouble, or the event's
  /// (in PostgreSQL's own words).
  [[noreturn]] static void refuse(const store_error& e) {
    // A table or column missing at run time is the event's only if the
    // statement still prepares (batch_apply.cpp asks): else it is retried.
    if (passing(e))
      throw sink_unavailable(std::string{"sink: "} + e.what());
    throw statement_refused(e.database_said().empty() ? e.what()
                                                      : e.database_said());
  }

  /// Runs `body`, its store_errors as the sink's: every failure of the
  /// inbox's own statements is the sink's, never an event's.
  template <class Body>
  void guarded(Body body) {
    try {
      body();
    } catch (const store_error& e) {
      if (e.code() == store_errc::schema)
        throw sink_error(std::string{"sink: "} + e.what());
      throw sink_unavailable(std::string{"sink: "} + e.what());
    }
  }

  void exec(const char* sql) {
    guarded([&] { session_->exec("sink batch", sql); });
  }

  std::unique_ptr<storage::postgres::session> session_;
};

} // namespace

std::unique_ptr<sink_session> open_postgres_session(const sink_target& target) {
  return std::make_unique<postgres_session>(target);
}

void execute_postgres(const sink_target& target, const std::string& sql) {
  auto session = connect(target);
  try {
    session->exec("sink", sql);
  } catch (const store_error& e) {
    if (e.code() == store_errc::busy)
      throw sink_unavailable(std::string{"sink: "} + e.what());
    throw sink_error(std::string{"sink: "} + (e.database_said().empty()
                                                  ? e.what()
                                                  : e.database_said()));
  }
}

void create_postgres_sink(const sink_target& target) {
  execute_postgres(target, inbox_schema);
}

} // namespace outbox::sink
