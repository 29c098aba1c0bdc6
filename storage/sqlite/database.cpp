#include "storage/sqlite/database.hpp"

#include "storage/private_files.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <thread>

namespace outbox::storage::sqlite {

namespace {

std::string normalize_synchronous(const std::string& value) {
  std::string upper = value;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  if (upper != "FULL" && upper != "NORMAL" && upper != "OFF")
    throw store_error(store_errc::invalid_input,
                      "synchronous must be FULL, NORMAL or OFF (got \"" +
                          value + "\")");
  return upper;
}

bool is_special_name(const std::string& path) {
  return path == ":memory:" || path.rfind("file:", 0) == 0;
}

void check_parent_folder(const std::string& path) {
  namespace fs = std::filesystem;
  auto parent = fs::path{path}.parent_path();
  if (parent.empty())
    return;
  std::error_code ec;
  auto st = fs::status(parent, ec);
  if (!fs::exists(st))
    throw store_error(store_errc::io, "cannot open database " + path +
                                          ": folder " + parent.string() +
                                          " does not exist");
  if (!fs::is_directory(st))
    throw store_error(store_errc::io, "cannot open database " + path + ": " +
                                          parent.string() + " is not a folder");
}

void check_not_a_folder(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw store_error(store_errc::io, "cannot open database " + path +
                                          ": it is a folder, not a file");
}

bool is_lock_error(const SQLite::Exception& e) {
  int code = e.getErrorCode() & 0xff;
  return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

void switch_to_wal(SQLite::Database& db, const db_options& options) {
  // Several connections switching a fresh file to WAL at once can see
  // "database is locked" without busy_timeout being applied: retry briefly.
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::milliseconds(
                                     std::max(options.busy_timeout_ms, 100));
  for (;;) {
    try {
      auto mode = db.execAndGet("PRAGMA journal_mode = WAL").getString();
      std::transform(mode.begin(), mode.end(), mode.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (mode != "wal" && mode != "memory")
        throw store_error(store_errc::io,
                          "cannot switch database " + options.path +
                              " to WAL (journal_mode is " + mode + ")");
      return;
    } catch (const SQLite::Exception& e) {
      if (!is_lock_error(e) || clock::now() >= deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

/// The busy handler: waits for another connection's write lock for up to
/// busy_timeout_ms (passed as the handler's argument). SQLite's own
/// busy_timeout sleeps 1, 2, 5, 10, ... 100 ms between tries, so a relay
/// that meets the writer's lock during a 1 ms fsync could lose 25 ms or
/// more: the tail of commit-to-processed latency. Short sleeps for the
/// first 10 ms hand the lock over quickly; 1 ms sleeps after that keep a
/// long wait cheap.
int wait_for_lock(void* timeout_ms, int tries) {
  using clock = std::chrono::steady_clock;
  // One lock wait at a time per thread: a connection is used by one thread.
  thread_local clock::time_point started;
  auto now = clock::now();
  if (tries == 0)
    started = now;
  auto limit = std::chrono::milliseconds(
      static_cast<int>(reinterpret_cast<std::intptr_t>(timeout_ms)));
  auto waited = now - started;
  if (waited >= limit)
    return 0;
  std::this_thread::sleep_for(waited < std::chrono::milliseconds(10)
                                  ? std::chrono::microseconds(50)
                                  : std::chrono::microseconds(1000));
  return 1;
}

/// Process-wide, before the first connection (sqlite3_config refuses once
/// the library is initialized): no memory statistics. SQLite otherwise
/// takes one global mutex around every allocation to count it, for
/// sqlite3_memory_used(), which nothing here reads; a writer-only run spent
/// about 7% of its CPU there.
const bool memory_statistics_off =
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;

/// Speed settings; none of them changes what a commit guarantees.
void apply_tuning(SQLite::Database& db) {
  // 64 MiB of page cache (default 2 MiB), allocated as pages are used: the
  // hot tail of the outbox and its indexes stay in memory across claims.
  db.exec("PRAGMA cache_size = -65536");
  // Checkpoint every ~40 MB of WAL (default ~4 MB): the pages that claims
  // and acks keep rewriting are copied back to the database once, not every
  // few batches. The WAL file is truncated back to 64 MiB afterwards.
  db.exec("PRAGMA wal_autocheckpoint = 10000");
  db.exec("PRAGMA journal_size_limit = 67108864");
  // The claim sorts expired leases; keep that tiny sort off the disk.
  db.exec("PRAGMA temp_store = MEMORY");
}

} // namespace

std::unique_ptr<SQLite::Database> open_database(const db_options& options) {
  auto synchronous = normalize_synchronous(options.synchronous);
  if (options.busy_timeout_ms < 0)
    throw store_error(store_errc::invalid_input,
                      "busy_timeout_ms must not be negative (got " +
                          std::to_string(options.busy_timeout_ms) + ")");
  if (options.path.empty())
    throw store_error(store_errc::invalid_input,
                      "database path must not be empty");
  if (!is_special_name(options.path)) {
    check_parent_folder(options.path);
    check_not_a_folder(options.path);
    // SQLite would create it 0644 (less the umask); its -wal and -shm
    // files copy the database file's mode, so this keeps all three private.
    create_private_file(options.path);
  }
  try {
    auto db = std::make_unique<SQLite::Database>(
        options.path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
        options.busy_timeout_ms);
    sqlite3_busy_handler(db->getHandle(), wait_for_lock,
                         reinterpret_cast<void*>(static_cast<std::intptr_t>(
                             options.busy_timeout_ms)));
    // SQLite silently falls back to read-only for a write-protected file.
    if (sqlite3_db_readonly(db->getHandle(), "main") == 1)
      throw store_error(store_errc::io,
                        "cannot open database " + options.path +
                            " for writing: this user may only read it"
                            " (status, verify and failed can)");
    switch_to_wal(*db, options);
    db->exec("PRAGMA synchronous = " + synchronous);
    db->exec("PRAGMA foreign_keys = ON");
    apply_tuning(*db);
    return db;
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("open", options.path);
  }
}

std::unique_ptr<SQLite::Database> open_and_migrate(const db_options& options) {
  auto db = open_database(options);
  migrate(*db);
  return db;
}

} // namespace outbox::storage::sqlite
