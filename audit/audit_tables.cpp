#include "audit/audit_tables.hpp"

#include "broker/applied_record.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <SQLiteCpp/VariadicBind.h>

namespace outbox::audit {

namespace {

constexpr const char* schema = R"(
CREATE TEMP TABLE audit_ledger (
  ord INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL,
  sku TEXT NOT NULL,
  qty INTEGER NOT NULL,
  published_at INTEGER NOT NULL,
  later INTEGER NOT NULL);
CREATE INDEX temp.audit_ledger_event ON audit_ledger (event_id);
CREATE INDEX temp.audit_ledger_aggregate ON audit_ledger (aggregate_id, seq);
CREATE TEMP TABLE audit_processed (
  event_id TEXT PRIMARY KEY,
  aggregate_id TEXT,
  seq INTEGER,
  event_type TEXT NOT NULL,
  sku TEXT NOT NULL,
  qty INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX temp.audit_processed_aggregate ON audit_processed (aggregate_id);
CREATE TEMP TABLE audit_processed_pages (
  event_id TEXT NOT NULL,
  aggregate_id TEXT,
  seq INTEGER,
  event_type TEXT NOT NULL,
  sku TEXT NOT NULL,
  qty INTEGER NOT NULL);
CREATE TEMP TABLE audit_trimmed (
  aggregate_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE audit_heads (
  aggregate_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE audit_waiting (
  event_id TEXT PRIMARY KEY, place INTEGER NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE audit_applied (
  aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TEMP TABLE audit_gaps (
  aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL, mark TEXT NOT NULL);
)";

constexpr const char* drop = R"(
DROP TABLE IF EXISTS temp.audit_ledger;
DROP TABLE IF EXISTS temp.audit_processed;
DROP TABLE IF EXISTS temp.audit_processed_pages;
DROP TABLE IF EXISTS temp.audit_trimmed;
DROP TABLE IF EXISTS temp.audit_heads;
DROP TABLE IF EXISTS temp.audit_waiting;
DROP TABLE IF EXISTS temp.audit_applied;
DROP TABLE IF EXISTS temp.audit_gaps;
)";

/// Copies the outbox's rows matching `where` into the ledger, in rowid
/// order, marked `later`: for OrderPlaced, the payload's sku and qty ('' and
/// 0 when absent).
std::string copy_rows(int later, const std::string& where) {
  return "INSERT INTO temp.audit_ledger (event_id, aggregate_id, seq,"
         " event_type, status, sku, qty, published_at, later)"
         " SELECT event_id, aggregate_id, seq, event_type, status,"
         " CASE WHEN event_type = 'OrderPlaced'"
         "  THEN COALESCE(CAST(json_extract(payload, '$.sku') AS TEXT), '')"
         "  ELSE '' END,"
         " CASE WHEN event_type = 'OrderPlaced'"
         "  THEN COALESCE(CAST(json_extract(payload, '$.qty') AS INTEGER), 0)"
         "  ELSE 0 END,"
         " COALESCE(published_at, 0), " +
         std::to_string(later) + " FROM main.outbox o " + where +
         " ORDER BY rowid";
}

/// Inserts one row with a prepared statement, `values` bound in order.
template <class... Values>
void insert_values(SQLite::Statement& insert, const Values&... values) {
  try {
    insert.reset();
    SQLite::bind(insert, values...);
    insert.exec();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

} // namespace

audit_tables::audit_tables(SQLite::Database& db) : db_(db) {
  create_tables();
}

audit_tables::audit_tables(storage::ledger_source& source)
    // "": SQLite's private temporary file, deleted when closed.
    : scratch_(std::make_unique<SQLite::Database>("", SQLite::OPEN_READWRITE |
                                                          SQLite::OPEN_CREATE)),
      db_(*scratch_), source_(&source) {
  create_tables();
}

template <class Copy>
void audit_tables::from_source(Copy copy) {
  try {
    SQLite::Transaction pages{db_};
    copy();
    pages.commit();
  } catch (const storage::store_error&) {
    throw;
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

void audit_tables::create_tables() {
  try {
    temp_store_ = db_.execAndGet("PRAGMA temp_store").getInt();
    cache_size_ = db_.execAndGet("PRAGMA main.cache_size").getInt();
    // The audit reads every page of the outbox once: a cache as large as
    // the database's would keep them all.
    db_.exec("PRAGMA main.cache_size = -8192");
    // Changing temp_store drops what the temp schema held: nothing here.
    db_.exec("PRAGMA temp_store = FILE");
    db_.exec(drop);
    // Their pages are cached up to 2 MiB; the rest is read from the file.
    db_.exec("PRAGMA temp.cache_size = -2048");
    db_.exec(schema);
    insert_row_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT INTO temp.audit_ledger (event_id, aggregate_id, seq,"
             " event_type, status, sku, qty, published_at, later)"
             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert_record_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT INTO temp.audit_processed_pages (event_id,"
             " aggregate_id, seq, event_type, sku, qty)"
             " VALUES (?, ?, ?, ?, ?, ?)");
    insert_trimmed_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT OR REPLACE INTO temp.audit_trimmed VALUES (?, ?)");
    // The first place an entry was seen counts (read_waiting).
    insert_waiting_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT OR IGNORE INTO temp.audit_waiting VALUES (?, ?)");
    insert_applied_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT INTO temp.audit_applied VALUES (?, ?)");
    insert_gap_ = std::make_unique<SQLite::Statement>(
        db_, "INSERT INTO temp.audit_gaps VALUES (?, ?, ?)");
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

audit_tables::~audit_tables() {
  insert_row_.reset();
  insert_record_.reset();
  insert_trimmed_.reset();
  insert_waiting_.reset();
  insert_applied_.reset();
  insert_gap_.reset();
  try {
    db_.exec(drop);
    db_.exec("PRAGMA temp_store = " + std::to_string(temp_store_));
    db_.exec("PRAGMA main.cache_size = " + std::to_string(cache_size_));
  } catch (...) {
    // The connection keeps a few empty tables: nothing to report.
  }
}

void audit_tables::copy_ledger() {
  if (source_ != nullptr)
    return from_source([&] { source_->copy_ledger(*this); });
  // One read transaction: one consistent snapshot in WAL mode. It writes
  // only the temp schema, so it takes no write lock on the database.
  in_one_transaction({copy_rows(0, "")});
}

void audit_tables::copy_later_rows() {
  if (source_ != nullptr)
    return from_source([&] { source_->copy_later(*this); });
  // In the same snapshot as the rows: a purge that deleted an aggregate's
  // last row had saved its head in the same transaction.
  in_one_transaction(
      {copy_rows(1, "WHERE NOT EXISTS (SELECT 1 FROM temp.audit_ledger"
                    " l WHERE l.event_id = o.event_id)"),
       "INSERT INTO temp.audit_heads SELECT aggregate_id, last_seq"
       " FROM main.aggregate_heads"});
}

void audit_tables::forget_all_but_ledger() {
  if (source_ != nullptr)
    source_->forget_later();
  in_one_transaction({"DELETE FROM temp.audit_ledger WHERE later = 1;"
                      "DELETE FROM temp.audit_heads;"
                      "DELETE FROM temp.audit_processed;"
                      "DELETE FROM temp.audit_processed_pages;"
                      "DELETE FROM temp.audit_trimmed;"
                      "DELETE FROM temp.audit_waiting;"
                      "DROP INDEX IF EXISTS temp.audit_applied_aggregate;"
                      "DROP INDEX IF EXISTS temp.audit_gaps_aggregate;"
                      "DELETE FROM temp.audit_applied;"
                      "DELETE FROM temp.audit_gaps"});
}

void audit_tables::in_one_transaction(
    std::initializer_list<std::string> statements) {
  try {
    SQLite::Transaction snapshot{db_, SQLite::TransactionBehavior::DEFERRED};
    for (const auto& statement : statements)
      db_.exec(statement);
    snapshot.commit();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

bool audit_tables::names_unknown_events() {
  try {
    settle_processed();
    return db_.execAndGet("SELECT EXISTS (SELECT 1 FROM temp.audit_processed"
                          " p WHERE NOT EXISTS (SELECT 1 FROM"
                          " temp.audit_ledger l WHERE l.event_id ="
                          " p.event_id))")
               .getInt() != 0;
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

void audit_tables::add_row(const storage::ledger_row& row, bool later) {
  try {
    auto& insert = *insert_row_;
    insert.reset();
    insert.bind(1, row.event_id);
    insert.bind(2, row.aggregate_id);
    insert.bind(3, row.seq);
    insert.bind(4, row.event_type);
    insert.bind(5, row.status);
    insert.bind(6, row.sku);
    insert.bind(7, row.qty);
    insert.bind(8, row.published_at);
    insert.bind(9, later ? 1 : 0);
    insert.exec();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

void audit_tables::add_head(const std::string& aggregate,
                            std::int64_t last_seq) {
  try {
    SQLite::Statement insert{
        db_, "INSERT OR REPLACE INTO temp.audit_heads VALUES (?, ?)"};
    insert.bind(1, aggregate);
    insert.bind(2, last_seq);
    insert.exec();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

void audit_tables::processed(broker::hash_page& page) {
  try {
    SQLite::Transaction one_page{db_};
    auto& insert = *insert_record_;
    for (const auto& [event_id, result] : page) {
      insert.reset();
      insert.clearBindings();
      insert.bind(1, event_id);
      auto record = broker::parse_applied_record(result);
      if (record) {
        insert.bind(2, record->aggregate_id);
        insert.bind(3, record->seq);
      }
      insert.bind(4, record ? record->event_type : std::string{});
      insert.bind(5, record ? record->sku : std::string{});
      insert.bind(6, record ? record->qty : 0);
      insert.exec();
    }
    one_page.commit();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

// HSCAN hands the records over in hash order, which is random: inserted
// one by one into audit_processed's key and its aggregate index, each would
// land on a random page, and past the 2 MiB cache nearly every one read and
// wrote one (most of an audit's time). They are appended to a plain table
// instead, then moved over sorted by event_id, and the aggregate index is
// built once, by sorting.
void audit_tables::settle_processed() {
  // Nothing new: the index stays as it is.
  if (db_.execAndGet("SELECT EXISTS (SELECT 1 FROM"
                     " temp.audit_processed_pages)")
          .getInt() == 0)
    return;
  in_one_transaction(
      {"DROP INDEX IF EXISTS temp.audit_processed_aggregate",
       // The first copy of an event id HSCAN gave twice counts (rowid).
       "INSERT OR IGNORE INTO temp.audit_processed SELECT event_id,"
       " aggregate_id, seq, event_type, sku, qty FROM"
       " temp.audit_processed_pages ORDER BY event_id, rowid",
       "DELETE FROM temp.audit_processed_pages",
       "CREATE INDEX temp.audit_processed_aggregate ON audit_processed"
       " (aggregate_id)"});
}

void audit_tables::trimmed(const std::string& aggregate, std::int64_t n) {
  insert_values(*insert_trimmed_, aggregate, n);
}

void audit_tables::waiting(const std::string& event_id,
                           broker::waiting_place where) {
  insert_values(*insert_waiting_, event_id, static_cast<int>(where));
}

void audit_tables::applied_seq(const std::string& aggregate, std::int64_t seq) {
  insert_values(*insert_applied_, aggregate, seq);
}

void audit_tables::gap(const std::string& aggregate, std::int64_t seq,
                       const std::string& mark) {
  insert_values(*insert_gap_, aggregate, seq, mark);
}

// Like `processed`, aggregate_seq and the gaps come in hash order: they
// are appended, and indexed once, by sorting, when read. A field HSCAN
// gives twice comes twice; the checks ask only whether one exists.
void audit_tables::index_inbox_state() {
  in_one_transaction(
      {"CREATE INDEX IF NOT EXISTS temp.audit_applied_aggregate ON"
       " audit_applied (aggregate_id, seq)",
       "CREATE INDEX IF NOT EXISTS temp.audit_gaps_aggregate ON"
       " audit_gaps (aggregate_id, seq)"});
}

std::int64_t audit_tables::processed_count() {
  try {
    settle_processed();
    return db_.execAndGet("SELECT COUNT(*) FROM temp.audit_processed")
        .getInt64();
  } catch (...) {
    storage::sqlite::rethrow_as_store_error("audit");
  }
}

} // namespace outbox::audit
