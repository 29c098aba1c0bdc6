#pragma once

// The two storage backends as a test parameter: the contract suites
// (tests/storage) run every case on a fresh SQLite file and on a fresh
// private PostgreSQL cluster, through storage::connect alone.

#include "storage/database.hpp"
#include "support/pg_server.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>

namespace outbox::test {

enum class backend { sqlite, postgres };

/// How gtest prints the parameter (in ctest's names and failures).
void PrintTo(backend kind, std::ostream* out);

/// "SQLite" or "PostgreSQL": the readable suffix of each parameterized
/// test's name (StorageOrderStore.SameKeySameParamsIsReplayed/PostgreSQL).
std::string backend_name(const ::testing::TestParamInfo<backend>& info);

/// An empty database of one backend, for one test: a file in a fresh
/// temporary folder, or its own PostgreSQL cluster (started here, stopped
/// and removed with this object).
class backend_database {
public:
  explicit backend_database(backend kind);

  backend kind() const { return kind_; }
  bool postgres() const { return kind_ == backend::postgres; }

  /// Options naming it, with the caller's clock: the tests drive time.
  storage::db_options options(int busy_timeout_ms = 5000) const;

  /// A new connection, as every caller outside storage/ opens one.
  std::unique_ptr<storage::database>
  connect(storage::open_mode mode = storage::open_mode::migrated) const;

  /// The cluster (PostgreSQL only).
  pg_server& server() { return *server_; }

private:
  backend kind_;
  temp_dir dir_;
  std::unique_ptr<pg_server> server_;
};

} // namespace outbox::test
