#pragma once

// The command line of an `outbox` process on a test's own stores.

#include <string>
#include <vector>

namespace outbox::test {

/// `command`, its `flags`, then --db `db`, --redis `redis` and --config
/// `config`.
inline std::vector<std::string>
outbox_command_line(const std::string& command,
                    const std::vector<std::string>& flags,
                    const std::string& db, const std::string& redis,
                    const std::string& config) {
  std::vector<std::string> all{command};
  all.insert(all.end(), flags.begin(), flags.end());
  all.insert(all.end(), {"--db", db, "--redis", redis, "--config", config});
  return all;
}

} // namespace outbox::test
