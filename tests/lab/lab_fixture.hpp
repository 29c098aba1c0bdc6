#pragma once

// `outbox lab` as a student runs it: the real binary, a lab folder in a
// fresh temporary directory and a private redis-server per test. Every
// check reads the lab's outputs from outside: the files, app.db through
// SQLiteCpp, Redis through broker::connection.

#include "broker/connection.hpp"
#include "support/process.hpp"
#include "support/redis_lists.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace outbox::test {

class lab_fixture : public ::testing::Test {
protected:
  /// One step (`--step NAME`) in `dir` (default: the test's lab folder).
  process_result lab_step(const std::string& step, std::string dir = "") {
    return run_outbox({"lab", "--dir", dir.empty() ? dir_ : dir, "--step", step,
                       "--redis", redis_.endpoint().to_string()},
                      tmp_.path().string(), 60'000);
  }

  /// Runs a step and expects it to succeed.
  void step_ok(const std::string& step) {
    auto r = lab_step(step);
    ASSERT_EQ(r.exit_code, 0) << step << "\n" << r.out << r.err;
  }

  /// Whether `step` succeeds and says `said` on its standard output.
  testing::AssertionResult step_says(const std::string& step,
                                     const std::string& said) {
    auto r = lab_step(step);
    if (r.exit_code != 0)
      return testing::AssertionFailure()
             << step << " exited " << r.exit_code << "\n"
             << r.out << r.err;
    if (r.out.find(said) == std::string::npos)
      return testing::AssertionFailure()
             << step << " did not say \"" << said << "\":\n"
             << r.out;
    return testing::AssertionSuccess();
  }

  /// The whole lab (no --step) in `dir`.
  process_result lab_all(const std::string& dir) {
    return run_outbox(
        {"lab", "--dir", dir, "--redis", redis_.endpoint().to_string()},
        tmp_.path().string(), 120'000);
  }

  /// A single number from app.db (COUNT(*) ...).
  std::int64_t app_db_number(const std::string& sql,
                             const std::string& dir = "") {
    SQLite::Database db{(dir.empty() ? dir_ : dir) + "/app.db",
                        SQLite::OPEN_READWRITE};
    return db.execAndGet(sql).getInt64();
  }

  std::int64_t redis_number(const std::vector<std::string>& command) {
    auto r = redis().command(command);
    return r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  }

  std::int64_t queue_length() {
    return redis_number({"LLEN", "outbox.events"});
  }
  std::int64_t processed_size() { return redis_number({"HLEN", "processed"}); }

  /// The whole queue list, head first.
  std::vector<std::string> queue() {
    return list_items(redis(), "outbox.events");
  }

  /// The lines of a file in the lab folder (empty if it does not exist).
  std::vector<std::string> lines_of(const std::string& name,
                                    const std::string& dir = "") {
    std::ifstream in{(dir.empty() ? dir_ : dir) + "/" + name};
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

  bool exists(const std::string& name) {
    return std::filesystem::exists(dir_ + "/" + name);
  }

  broker::connection& redis() { return redis_conn_; }

  temp_dir tmp_{"outbox-lab"};
  /// The lab folder: not created yet, as for a student's first command.
  std::string dir_ = tmp_.file("lab");
  redis_server redis_;
  broker::connection redis_conn_{redis_.connection_options()};
};

} // namespace outbox::test
