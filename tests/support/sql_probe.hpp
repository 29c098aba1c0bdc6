#pragma once

// Raw SQL on the database under test, beside its stores: what the stores
// wrote (a column of a row, counts) and rows a test writes by hand. One
// interface for both dialects, with helpers for what differs between them.

#include "storage/clock.hpp"
#include "support/storage_backend.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace outbox::test {

class sql_probe {
public:
  /// A connection of its own to `db` (initialised already): SQLiteCpp on
  /// the file, libpq on PostgreSQL.
  static std::unique_ptr<sql_probe> open(const backend_database& db);
  /// The same for the database `options` name, on `kind` (a missing
  /// SQLite file is created).
  static std::unique_ptr<sql_probe> open(backend kind,
                                         const storage::db_options& options);
  virtual ~sql_probe() = default;

  /// The first column of the first row as an integer.
  virtual std::int64_t scalar(const std::string& sql) = 0;
  /// The first column of the first row as text ("" for NULL).
  virtual std::string text(const std::string& sql) = 0;
  /// Runs statements; throws std::runtime_error (SQLite::Exception on
  /// SQLite) with the database's message when one fails.
  virtual void exec(const std::string& sql) = 0;

  /// `column` of the outbox as the interfaces' milliseconds: SQLite stores
  /// ms integers, PostgreSQL timestamptz.
  virtual std::string ms(const std::string& column) const = 0;
  /// A time value to write, from milliseconds (`ms_sql` an SQL integer
  /// expression).
  virtual std::string time_of(const std::string& ms_sql) const = 0;
  std::string at(storage::millis ms) const {
    return time_of(std::to_string(ms));
  }
  /// The outbox's row id column: SQLite's rowid, PostgreSQL's id.
  virtual std::string rowid() const = 0;
  /// The event id a test names `name_sql` (an SQL text expression): the
  /// name itself on SQLite, a UUID spelling it on PostgreSQL, where
  /// event_id is a uuid (see named_event_id).
  virtual std::string event_id(const std::string& name_sql) const = 0;

  /// Whether a table `name` exists.
  virtual bool has_table(const std::string& name) = 0;

  /// After rows written into the outbox by hand: on PostgreSQL, sets each
  /// aggregate's head in aggregate_heads to its highest seq, as the
  /// outbox's insert trigger keeps it for every writer there (the seq
  /// allocator, which purge reads too; the probe writes with that trigger
  /// off, as a restore does). On SQLite nothing: it allocates from the
  /// outbox and keeps heads only for aggregates purged to their end.
  virtual void keep_heads() = 0;

  /// `column` (a time column in ms) as text, "NULL" for NULL: what a
  /// column check compares.
  std::string as_text(const std::string& column) const;
};

/// The event id of a row a test wrote with sql_probe::event_id('name'):
/// `name` on SQLite; on PostgreSQL its bytes in hex, padded with zeros to
/// a UUID (names up to 16 bytes).
std::string named_event_id(backend kind, const std::string& name);

} // namespace outbox::test
