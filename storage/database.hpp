#pragma once

// The database the stores live in, as every caller outside storage/ sees
// it. connect() opens it from the `db` settings: the one place a backend is
// chosen (storage/connect.cpp).

#include "storage/database_identity.hpp"
#include "storage/db_options.hpp"
#include "storage/ledger.hpp"

#include <memory>
#include <vector>

namespace outbox::storage {

class lease_store;
class order_store;
class outbox_views;
class retention_store;

/// The schema version this binary writes.
inline constexpr int schema_version = 10;

/// How a caller opens the database.
enum class open_mode {
  /// Opens it (creating an empty file if needed) and checks nothing: each
  /// store checks the schema (the relays), or the caller migrates (init).
  as_is,
  /// An initialised database of this binary's schema, read and written
  /// (purge, retry, the lab).
  existing,
  /// Creates or upgrades the schema first (place-order, run, the writer,
  /// the probe).
  migrated,
  /// An initialised database, only read: it then works on a file the user
  /// can read but not write (status, verify, failed).
  read_only,
};

/// One open database. The stores it makes share its connection: use them
/// from one thread at a time, and never after the database is gone.
/// Throws store_error.
class database {
public:
  virtual ~database() = default;

  /// Orders with their outbox rows (the writer, place-order).
  virtual std::unique_ptr<order_store> orders() = 0;
  /// The lease protocol (the relays).
  virtual std::unique_ptr<lease_store> leases() = 0;
  /// Counts, FAILED rows and retries (status, failed, retry, the probe).
  virtual std::unique_ptr<outbox_views> views() = 0;
  /// Purging what was published long ago (purge).
  virtual std::unique_ptr<retention_store> retention() = 0;

  /// The publication of each event, in order, read in one snapshot; the
  /// same rule for "purged" as `outbox verify`'s (trim).
  virtual std::vector<publication>
  read_publications(const std::vector<applied_event>& events) = 0;

  /// The audit's reads, for a backend the audit cannot join in place;
  /// nullptr for SQLite, whose connection the audit uses itself
  /// (audit/audit_tables.hpp).
  virtual std::unique_ptr<ledger_source> ledger() = 0;

  /// Who this database is (schema 5 or later).
  virtual database_identity identity() = 0;

  /// The schema version the database has now: 0 when it is new, or when it
  /// cannot be read (migrate() then says why).
  virtual int found_schema_version() = 0;

  /// Creates or upgrades the schema to `schema_version`. Idempotent; fails
  /// for a database newer than this binary.
  virtual void migrate() = 0;

  /// True when reads see the database as it was when opened (a read-only
  /// SQLite file opened `immutable`): a reader that stays open (status
  /// --watch) must connect anew to see later commits.
  virtual bool frozen() = 0;
};

/// Opens the database `options` name, in `mode`. Throws store_error (io
/// when it is unusable, schema when it is not initialised for the modes
/// that need it).
std::unique_ptr<database> connect(const db_options& options, open_mode mode);

} // namespace outbox::storage
