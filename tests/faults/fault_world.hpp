#pragma once

#include "broker/connection.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"
#include "support/temp_dir.hpp"
#include "tests/faults/fault_checks.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

/// What every fault test stands on: a temporary directory for the database
/// and its config file, a private redis-server, and `outbox` commands
/// against both. The scenarios under load build on it (fault_fixture); a
/// test of one hostile input uses it as it is.
class fault_world : public ::testing::Test {
protected:
  /// What a world runs against: a private redis-server, or a Redis under
  /// Sentinel (a master, a replica, three sentinels: support/
  /// sentinel_group.hpp) that every command finds through a
  /// redis-sentinel:// address.
  enum class redis_kind { single, under_sentinel };

  explicit fault_world(redis_server::options redis_options = {});
  explicit fault_world(redis_kind kind);

  /// Writes fast_config(patch) to `name` in the directory (by default the
  /// config every command gets); returns its path.
  std::string write_config(const nlohmann::json& patch = {},
                           const std::string& name = "fault.json") const;

  /// A connection to the test's Redis, to break it or read it (under
  /// Sentinel: to the master the sentinels name now).
  broker::connection redis() const;
  broker::connection_options redis_options() const;
  /// What --redis names: the server's HOST:PORT, or the sentinels' URI.
  std::string redis_address() const;

  /// --db, --redis and --config for every command.
  std::vector<std::string> common() const;

  /// `command` then --db `db`, this Redis and --config `config`: common()
  /// for a test that points a command at another database or config file.
  std::vector<std::string> with_common(std::vector<std::string> command,
                                       const std::string& db,
                                       const std::string& config) const;

  /// `outbox` with `command` then common(), run to its end (bounded), in
  /// the test's directory.
  process_result outbox(std::vector<std::string> command,
                        int timeout_ms = 60'000) const;

  /// Where the outside checks (fault_checks.hpp) find this pipeline.
  pipeline_location where() const;

  temp_dir dir_{"outbox-fault"};
  std::string db_path_ = dir_.file("app.db");
  std::string config_path_ = dir_.file("fault.json");
  /// The private redis-server; null under Sentinel.
  std::unique_ptr<redis_server> redis_;
  /// The Redis under Sentinel; null for a single server.
  std::unique_ptr<sentinel_group> sentinels_;
};

} // namespace outbox::test
