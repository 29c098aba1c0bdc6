#pragma once

// Outbox rows a CLI test writes by hand, in states the pipeline would take
// long to reach (old, failed, leased, holding hostile bytes), so the
// commands that read them can be checked on exactly that state.

#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/VariadicBind.h>

#include <string>
#include <utility>

namespace outbox::test {

/// One outbox row. The columns not named here take the schema's defaults;
/// published_at is created_at for a PUBLISHED row and NULL otherwise, as
/// the schema requires.
struct hand_row {
  hand_row(std::string event_id_, std::string aggregate_id_, int seq_,
           std::string status_, storage::millis created_at_)
      : event_id(std::move(event_id_)), aggregate_id(std::move(aggregate_id_)),
        seq(seq_), status(std::move(status_)), created_at(created_at_) {}

  std::string event_id;
  std::string aggregate_id;
  int seq;
  std::string status;
  storage::millis created_at;
  std::string event_type = "OrderPlaced";
  std::string payload = "{}";
  int attempts = 0;
  /// Empty: NULL.
  std::string last_error;
  /// Empty: NULL (only a SENDING row has an owner).
  std::string owner;
  storage::millis lease_until = 0;
};

/// Inserts `row` into the outbox table of the database at `db_path`.
inline void insert_row(const std::string& db_path, const hand_row& row) {
  SQLite::Database db{db_path, SQLite::OPEN_READWRITE};
  // The schema's rules in the SQL: an empty owner or error is NULL, and
  // only a PUBLISHED row has published_at (its created_at).
  SQLite::Statement insert{
      db, "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
          " payload, status, owner, lease_until, attempts, last_error,"
          " created_at, published_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
          " NULLIF(?7, ''), ?8, ?9, NULLIF(?10, ''), ?11,"
          " CASE ?6 WHEN 'PUBLISHED' THEN ?11 END)"};
  SQLite::bind(insert, row.event_id, row.aggregate_id, row.seq, row.event_type,
               row.payload, row.status, row.owner, row.lease_until,
               row.attempts, row.last_error, row.created_at);
  insert.exec();
}

} // namespace outbox::test
