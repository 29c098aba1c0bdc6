#pragma once

// The storage contract (ARCHITECTURE.md, "Adding a storage backend"): a
// fixture whose parameter is the backend, so every case of a suite runs on
// SQLite and on PostgreSQL alike. The database is opened through
// storage::connect, the stores through its interfaces, and raw SQL checks
// go through a neutral probe.

#include "storage/database.hpp"
#include "storage/order_store.hpp"
#include "support/sql_probe.hpp"
#include "support/storage_backend.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace outbox::test {

class contract_fixture : public ::testing::TestWithParam<backend> {
protected:
  bool postgres() const { return backend_.postgres(); }

  storage::db_options options(int busy_timeout_ms = 5000) const {
    return backend_.options(busy_timeout_ms);
  }
  /// Another connection to the same database.
  std::unique_ptr<storage::database>
  connect(storage::open_mode mode = storage::open_mode::migrated) const {
    return backend_.connect(mode);
  }

  /// A new, empty database beside the fixture's: another file, or another
  /// database of the same cluster (cheaper than a cluster of its own).
  storage::db_options empty_database(const std::string& name) {
    auto result = options();
    if (postgres()) {
      exec("CREATE DATABASE " + name);
      result.path = backend_.server().uri(name);
    } else {
      result.path += "." + name;
    }
    return result;
  }

  std::int64_t scalar(const std::string& sql) { return sql_->scalar(sql); }
  std::string text(const std::string& sql) { return sql_->text(sql); }
  void exec(const std::string& sql) { sql_->exec(sql); }
  /// The id of a row written with sql_->event_id('name').
  std::string event_id(const std::string& name) const {
    return named_event_id(GetParam(), name);
  }

  backend_database backend_{GetParam()};
  std::unique_ptr<storage::database> db_ = backend_.connect();
  std::unique_ptr<sql_probe> sql_ = sql_probe::open(backend_);
};

} // namespace outbox::test

/// Runs `suite`'s TEST_Ps on both backends, named .../SQLite and
/// .../PostgreSQL.
#define OUTBOX_ON_BOTH_BACKENDS(suite)                                         \
  INSTANTIATE_TEST_SUITE_P(                                                    \
      , suite,                                                                 \
      ::testing::Values(::outbox::test::backend::sqlite,                       \
                        ::outbox::test::backend::postgres),                    \
      ::outbox::test::backend_name)
