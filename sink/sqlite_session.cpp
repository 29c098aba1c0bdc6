// The sink on a SQLite file.

#include "sink/backends.hpp"
#include "sink/event_values.hpp"
#include "sink/sink_session.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <cctype>
#include <map>
#include <memory>

namespace outbox::sink {

namespace {

/// Whether SQLite's error passes by itself or with the operator's help (a
/// lock, a full or unwritable disk), rather than being the event's fault.
bool passing(int code) {
  switch (code & 0xff) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
  case SQLITE_IOERR:
  case SQLITE_FULL:
  case SQLITE_CANTOPEN:
  case SQLITE_READONLY:
  case SQLITE_NOMEM:
  case SQLITE_PROTOCOL:
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
  case SQLITE_PERM:
    return true;
  default:
    return false;
  }
}

int refuse_transaction_control(void*, int action, const char*, const char*,
                               const char*, const char*) {
  return action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT
             ? SQLITE_DENY
             : SQLITE_OK;
}

/// Whether `text` holds only blanks and comments.
bool blank(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i])) != 0) {
      ++i;
    } else if (text.compare(i, 2, "--") == 0) {
      auto end = text.find('\n', i);
      i = end == std::string::npos ? text.size() : end;
    } else if (text.compare(i, 2, "/*") == 0) {
      auto end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
    } else {
      return false;
    }
  }
  return true;
}

[[noreturn]] void unavailable(const std::string& file,
                              const SQLite::Exception& e) {
  throw sink_unavailable("sink " + file + ": " + e.what());
}

void bind_value(SQLite::Statement& statement, int index,
                const nlohmann::json& value) {
  if (value.is_null())
    statement.bind(index);
  else if (value.is_boolean())
    statement.bind(index, value.get<bool>() ? 1 : 0);
  else if (value.is_number_integer() && value.is_number_unsigned() &&
           value.get<std::uint64_t>() > INT64_MAX)
    statement.bind(index, value.get<double>());
  else if (value.is_number_integer())
    statement.bind(index, value.get<std::int64_t>());
  else if (value.is_number())
    statement.bind(index, value.get<double>());
  else if (value.is_string())
    statement.bind(index, value.get_ref<const std::string&>());
  else
    statement.bind(index, value.dump());
}

class sqlite_session : public sink_session {
public:
  sqlite_session(const sink_target& target)
      : file_(target.location), db_(open(target)) {}

  void transaction(const std::function<void()>& body) override {
    try {
      // IMMEDIATE: the write lock at once, so a busy sink waits here
      // (busy_timeout) rather than fail midway through the batch.
      db_.exec("BEGIN IMMEDIATE");
    } catch (const SQLite::Exception& e) {
      unavailable(file_, e);
    }
    try {
      body();
      db_.exec("COMMIT");
    } catch (const SQLite::Exception& e) {
      roll_back();
      if (passing(e.getErrorCode()))
        unavailable(file_, e);
      // A deferred foreign key, refused at COMMIT.
      throw statement_refused(e.what());
    } catch (...) {
      roll_back();
      throw;
    }
  }

  void savepoint() override { step("SAVEPOINT event"); }
  void release_savepoint() override { step("RELEASE event"); }
  void roll_back_to_savepoint() override {
    // RAISE(ROLLBACK), INSERT OR ROLLBACK: the statement ended the whole
    // transaction, savepoint and all.
    if (sqlite3_get_autocommit(db_.getHandle()) != 0)
      throw statement_refused("the statement rolled back its transaction");
    step("ROLLBACK TO event");
  }

  bool insert_row(const std::string& consumer, const sink_event& event,
                  std::int64_t now_ms) override {
    try {
      if (!insert_)
        insert_ = std::make_unique<SQLite::Statement>(db_, insert_sql);
      auto& insert = *insert_;
      insert.tryReset();
      insert.bind(1, consumer);
      insert.bind(2, event.event_id);
      insert.bind(3, event.aggregate_id);
      insert.bind(4, event.seq);
      insert.bind(5, event.event_type);
      insert.bind(6, now_ms);
      return insert.exec() == 1;
    } catch (const SQLite::Exception& e) {
      unavailable(file_, e);
    }
  }

  void run_statement(const sql_statement& statement,
                     const sink_event& event) override {
    try {
      auto& prepared = prepared_for(statement);
      // Not reset(): it throws the last run's error again, and a refused
      // statement's next event would be refused for it.
      prepared.tryReset();
      prepared.clearBindings();
      for (std::size_t i = 0; i < statement.parameters.size(); ++i)
        bind_value(prepared, static_cast<int>(i + 1),
                   parameter_value(event, statement.parameters[i]));
      while (prepared.executeStep()) {
      }
    } catch (const SQLite::Exception& e) {
      if (passing(e.getErrorCode()))
        unavailable(file_, e);
      throw statement_refused(e.what());
    }
  }

  std::vector<inbox_row> applied_before(const std::string& consumer,
                                        std::int64_t before_ms,
                                        const inbox_row* after,
                                        std::size_t limit) override {
    try {
      // $N are named parameters to SQLite, numbered by first appearance:
      // page_sql names $1..$5 in that order, so index N binds $N.
      SQLite::Statement query{db_, page_sql};
      query.bind(1, consumer);
      query.bind(2, before_ms);
      query.bind(3, after ? after->applied_at : std::int64_t{-1});
      query.bind(4, after ? after->event_id : std::string{});
      query.bind(5, static_cast<std::int64_t>(limit));
      std::vector<inbox_row> rows;
      while (query.executeStep())
        rows.push_back(
            {query.getColumn(0).getString(), query.getColumn(1).getString(),
             query.getColumn(2).getInt64(), query.getColumn(3).getInt64()});
      return rows;
    } catch (const SQLite::Exception& e) {
      unavailable(file_, e);
    }
  }

  std::size_t forget(const std::string& consumer,
                     const std::vector<std::string>& event_ids) override {
    std::size_t deleted = 0;
    transaction([&] {
      SQLite::Statement remove{
          db_, "DELETE FROM outbox_inbox WHERE consumer = ? AND event_id = ?"};
      for (const auto& id : event_ids) {
        remove.reset();
        remove.bind(1, consumer);
        remove.bind(2, id);
        deleted += static_cast<std::size_t>(remove.exec());
      }
    });
    return deleted;
  }

  void prepare(const sql_statement& statement) override {
    try {
      prepared_for(statement);
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() == SQLITE_AUTH)
        throw statement_refused("transaction control is the consumer's: no "
                                "BEGIN, COMMIT, ROLLBACK, SAVEPOINT or "
                                "RELEASE in an effect");
      if (passing(e.getErrorCode()))
        unavailable(file_, e);
      throw statement_refused(e.what());
    }
    // SQLite reads one statement and ignores the rest: where it reads the
    // text otherwise than the file's sections (no nested comments, no E''
    // strings), the rest would be lost without a word.
    if (!blank(rest_after_first(statement.sqlite)))
      throw statement_refused(
          "SQLite reads more than one statement here; end each with `;`");
  }

  bool prepares(const sql_statement& statement) override {
    prepared_.erase(statement.sqlite);
    try {
      prepared_for(statement);
      return true;
    } catch (const SQLite::Exception& e) {
      if (passing(e.getErrorCode()))
        unavailable(file_, e);
      return false;
    }
  }

private:
  static constexpr const char* insert_sql =
      "INSERT INTO outbox_inbox (consumer, event_id, aggregate_id, seq,"
      " event_type, applied_at) VALUES (?, ?, ?, ?, ?, ?)"
      " ON CONFLICT DO NOTHING";

  static SQLite::Database open(const sink_target& target) {
    const auto& file = target.location;
    try {
      SQLite::Database db{file, SQLite::OPEN_READWRITE};
      // Before the first read: a writer holding the file makes it wait.
      db.setBusyTimeout(target.busy_timeout_ms);
      SQLite::Statement table{db,
                              "SELECT 1 FROM sqlite_master WHERE type = 'table'"
                              " AND name = 'outbox_inbox'"};
      if (!table.executeStep())
        throw sink_error("sink " + file +
                         " has no outbox_inbox table: create it with "
                         "`outbox init --sink " +
                         file + "`");
      return db;
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() == SQLITE_CANTOPEN)
        throw sink_error("sink " + file + " cannot be opened (" + e.what() +
                         "): create it with `outbox init --sink " + file + "`");
      unavailable(file, e);
    }
  }

  void roll_back() noexcept {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
      // No transaction left to end (SQLite ended it on the error).
    }
  }

  void step(const char* sql) {
    try {
      db_.exec(sql);
    } catch (const SQLite::Exception& e) {
      unavailable(file_, e);
    }
  }

  /// The statement, prepared once. Transaction control is refused (an
  /// authorizer while it is prepared): an effect that committed or rolled
  /// back would take the batch's inbox rows with it.
  SQLite::Statement& prepared_for(const sql_statement& statement) {
    auto found = prepared_.find(statement.sqlite);
    if (found != prepared_.end())
      return *found->second;
    sqlite3_set_authorizer(db_.getHandle(), refuse_transaction_control,
                           nullptr);
    std::unique_ptr<SQLite::Statement> made;
    try {
      made = std::make_unique<SQLite::Statement>(db_, statement.sqlite);
    } catch (...) {
      sqlite3_set_authorizer(db_.getHandle(), nullptr, nullptr);
      throw;
    }
    sqlite3_set_authorizer(db_.getHandle(), nullptr, nullptr);
    return *(prepared_[statement.sqlite] = std::move(made));
  }

  /// The text after the first statement SQLite reads in `sql`.
  std::string rest_after_first(const std::string& sql) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    sqlite3_prepare_v2(db_.getHandle(), sql.c_str(),
                       static_cast<int>(sql.size()), &raw, &tail);
    sqlite3_finalize(raw);
    return tail ? std::string{tail} : std::string{};
  }

  std::string file_;
  SQLite::Database db_;
  std::unique_ptr<SQLite::Statement> insert_;
  /// By their text.
  std::map<std::string, std::unique_ptr<SQLite::Statement>> prepared_;
};

} // namespace

std::unique_ptr<sink_session> open_sqlite_session(const sink_target& target) {
  return std::make_unique<sqlite_session>(target);
}

namespace {

/// Opens `target` (created if missing) and runs `sql`.
void run_sql(const sink_target& target, const char* sql) {
  try {
    SQLite::Database db{target.location,
                        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE};
    db.setBusyTimeout(target.busy_timeout_ms);
    db.exec(sql);
  } catch (const SQLite::Exception& e) {
    if (passing(e.getErrorCode()))
      unavailable(target.location, e);
    throw sink_error("sink " + target.location + ": " + e.what());
  }
}

} // namespace

void create_sqlite_sink(const sink_target& target) {
  // WAL: the consumer's commits do not block readers of the user's tables.
  run_sql(target, "PRAGMA journal_mode = WAL");
  run_sql(target, inbox_schema);
}

void execute_sqlite(const sink_target& target, const std::string& sql) {
  run_sql(target, sql.c_str());
}

} // namespace outbox::sink
