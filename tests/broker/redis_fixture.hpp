#pragma once

#include "broker/connection.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

/// One private redis-server per test suite, emptied before each test.
class redis_fixture : public ::testing::Test {
public:
  static void SetUpTestSuite() { server_ = std::make_unique<redis_server>(); }

  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    conn_ = std::make_unique<broker::connection>(server_->connection_options());
    conn_->command({"FLUSHALL"});
  }

protected:
  broker::connection& conn() { return *conn_; }

  /// A list's entries, head first.
  using strings = std::vector<std::string>;

  /// The whole list.
  strings list(const std::string& key);
  /// A hash field as text, empty if absent.
  std::string hash_field(const std::string& key, const std::string& field);
  /// A hash field as an integer, 0 if absent.
  long long hash_integer(const std::string& key, const std::string& field);

  static std::unique_ptr<redis_server> server_;
  std::unique_ptr<broker::connection> conn_;
};

} // namespace outbox::test
