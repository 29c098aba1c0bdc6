#pragma once

#include "broker/inbox_reader.hpp"
#include "storage/ledger.hpp"
#include "storage/sqlite_fwd.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

namespace outbox::audit {

/// The snapshots evaluate() compares, kept in TEMP tables of a SQLite
/// connection (temp_store FILE while they exist, so they live on disk and
/// memory holds SQLite's page caches, not the events; the database's cache
/// is 8 MiB meanwhile, the temporary file's 2 MiB):
/// - audit_ledger: the outbox rows (`later` = 0), then rows committed after
///   that read that the first read did not have (`later` = 1);
/// - audit_processed: `processed`, each record parsed (aggregate_id NULL
///   when it names no aggregate and seq);
/// - audit_trimmed: trimmed_aggregates; audit_heads: aggregate_heads;
/// - audit_waiting: entries in the dead-letter list, processing lists and
///   queues (place: broker::waiting_place);
/// - audit_applied: aggregate_seq; audit_gaps: the inbox's gaps hash (seq 0
///   for an overflow marker), both only once something was trimmed.
/// Dropped, and temp_store and cache_size restored, when this object goes.
/// On another backend (PostgreSQL) the same tables live in a private
/// temporary SQLite file of their own, filled from the backend's
/// ledger_source. Throws store_error.
class audit_tables : public broker::inbox_sink, public storage::ledger_sink {
public:
  /// The tables on the outbox's own SQLite connection.
  explicit audit_tables(SQLite::Database& db);
  /// The tables in a private temporary file, the snapshots from `source`.
  explicit audit_tables(storage::ledger_source& source);
  ~audit_tables() override;
  audit_tables(const audit_tables&) = delete;
  audit_tables& operator=(const audit_tables&) = delete;

  SQLite::Database& db() { return db_; }

  /// The outbox of `db` as the ledger, read in one snapshot.
  void copy_ledger();
  /// Rows of the outbox not in the ledger, and aggregate_heads, read in one
  /// snapshot (after forget_all_but_ledger, or once).
  void copy_later_rows();
  /// Forgets the inbox, the later rows and the heads, to read them again.
  void forget_all_but_ledger();
  /// True when `processed` names an event the ledger does not have.
  bool names_unknown_events();

  /// Indexes audit_applied and audit_gaps once they are filled.
  void index_inbox_state();

  /// For snapshots given by hand.
  void add_row(const storage::ledger_row& row, bool later);
  void add_head(const std::string& aggregate, std::int64_t last_seq);

  void row(const storage::ledger_row& row, bool later) override {
    add_row(row, later);
  }
  void head(const std::string& aggregate, std::int64_t last_seq) override {
    add_head(aggregate, last_seq);
  }

  void processed(broker::hash_page& page) override;
  void trimmed(const std::string& aggregate, std::int64_t n) override;
  /// Like every reader of audit_processed here, first moves the records
  /// processed() gathered into it (settle_processed); the SQL that reads
  /// audit_processed directly (evaluate) runs after this count.
  std::int64_t processed_count() override;
  void waiting(const std::string& event_id,
               broker::waiting_place where) override;
  void applied_seq(const std::string& aggregate, std::int64_t seq) override;
  void gap(const std::string& aggregate, std::int64_t seq,
           const std::string& mark) override;

private:
  void create_tables();
  /// Moves the records gathered by processed() into audit_processed.
  void settle_processed();
  /// Runs `statements` in one (deferred) transaction: one snapshot.
  void in_one_transaction(std::initializer_list<std::string> statements);
  /// Runs `copy` in one transaction of the scratch file.
  template <class Copy>
  void from_source(Copy copy);

  /// The private temporary file, when the outbox is not SQLite.
  std::unique_ptr<SQLite::Database> scratch_;
  SQLite::Database& db_;
  storage::ledger_source* source_ = nullptr;
  int temp_store_ = 0;
  int cache_size_ = 0;
  std::unique_ptr<SQLite::Statement> insert_row_;
  std::unique_ptr<SQLite::Statement> insert_record_;
  std::unique_ptr<SQLite::Statement> insert_trimmed_;
  std::unique_ptr<SQLite::Statement> insert_waiting_;
  std::unique_ptr<SQLite::Statement> insert_applied_;
  std::unique_ptr<SQLite::Statement> insert_gap_;
};

} // namespace outbox::audit
