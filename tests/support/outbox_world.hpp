#pragma once

// What the end-to-end tests of one command run against: the real binary, a
// SQLite file or a private PostgreSQL cluster, a private redis-server, and
// a config file of the test's (support/fast_config.hpp), all in a
// temporary folder removed with the world.

#include "support/command_line.hpp"
#include "support/fast_config.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/storage_backend.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

class outbox_world {
public:
  /// The cluster, if any, is started here: in the test's own thread, which
  /// outlives it (pg_server.hpp: PR_SET_PDEATHSIG is per thread).
  outbox_world(backend db, const std::string& name)
      : dir_("outbox-" + name), config_(dir_.file(name + ".json")),
        pg_(db == backend::postgres ? std::make_unique<pg_server>() : nullptr) {
    write_config({});
  }

  /// fast_config with `patch` merged in.
  void write_config(const nlohmann::json& patch) const {
    std::ofstream{config_} << fast_config(patch);
  }

  /// The --db of every command: the file, or the cluster's URI.
  std::string db() const { return pg_ ? pg_->uri() : dir_.file("app.db"); }

  /// `command`, its `flags`, then --db, --redis and --config.
  std::vector<std::string> args(const std::string& command,
                                std::vector<std::string> flags = {}) const {
    return outbox_command_line(command, flags, db(),
                               redis_.endpoint().to_string(), config_);
  }

  /// Runs `outbox <command> <flags>` to completion, in the folder.
  process_result outbox(const std::string& command,
                        std::vector<std::string> flags = {}) const {
    return run_outbox(args(command, std::move(flags)), dir_.path().string());
  }

  const temp_dir& dir() const { return dir_; }
  const redis_server& redis() const { return redis_; }

private:
  temp_dir dir_;
  std::string config_;
  redis_server redis_;
  std::unique_ptr<pg_server> pg_;
};

} // namespace outbox::test
