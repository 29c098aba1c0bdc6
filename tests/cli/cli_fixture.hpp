#pragma once

#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace outbox::test {

/// Runs the real `outbox` binary in a fresh working directory with its own
/// database file; no config/outbox.json there, so defaults apply.
class cli_fixture : public ::testing::Test {
protected:
  std::string db_path() const { return dir_.file("app.db"); }

  /// Runs outbox with `args` plus --db (and the extra common flags).
  process_result outbox(std::vector<std::string> args,
                        const std::vector<std::string>& extra = {}) {
    args.push_back("--db");
    args.push_back(db_path());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_outbox(args, dir_.path().string());
  }

  /// Writes a config file in the working directory and returns its path.
  std::string write_config(const std::string& name, const std::string& text) {
    auto path = dir_.file(name);
    std::ofstream{path} << text;
    return path;
  }

  std::int64_t count(const std::string& table) {
    SQLite::Database db{db_path()};
    return db.execAndGet("SELECT COUNT(*) FROM " + table).getInt64();
  }

  static nlohmann::json json_of(const process_result& r) {
    return nlohmann::json::parse(r.out);
  }

  temp_dir dir_{"outbox-cli"};
};

} // namespace outbox::test
