#pragma once

// The private state of sqlite::lease_store, shared by its implementation
// files (lease_store.cpp, claim.cpp). Not part of the interface.

#include "storage/sqlite/lease_store.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <string>

namespace outbox::storage::sqlite {

struct lease_store::impl {
  explicit impl(SQLite::Database& database);

  /// Marks a row FAILED (no owner, no lease) with `error` as last_error.
  void give_up(std::int64_t rowid, const std::string& error);

  /// Binds the fence (rowid, event_id, owner, epoch) at `index` and runs
  /// `statement`: an update (returns whether it changed the row) or a query
  /// (returns whether it has a row, left on it). A lease without a rowid, or
  /// whose rowid no longer names its event, is found by event_id instead.
  bool run_fenced(SQLite::Statement& statement, int index,
                  const std::string& owner, const event_lease& lease);

  SQLite::Database& db;
  std::string name;

  // claim
  SQLite::Statement claim_candidates;
  SQLite::Statement head_seq;
  SQLite::Statement take;
  SQLite::Statement fail_row;

  /// Where the next claim's candidate walk starts: after this rowid (0: at
  /// the oldest candidate). Set when a walk stops at its bound.
  std::int64_t resume_after = 0;

  // fenced updates: bound as (..., rowid, event_id, owner, lease_epoch)
  SQLite::Statement locate_event;
  SQLite::Statement ack_row;
  SQLite::Statement release_row;
  SQLite::Statement renew_row;
  SQLite::Statement held_row;
  SQLite::Statement back_off_row;
};

} // namespace outbox::storage::sqlite
