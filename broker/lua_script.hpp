#pragma once

#include "broker/connection.hpp"

#include <string>
#include <utility>
#include <vector>

namespace outbox::broker {

/// A Lua script run by EVALSHA. Loaded with SCRIPT LOAD on first use, and
/// loaded again when Redis answers NOSCRIPT (a restart or SCRIPT FLUSH makes
/// it forget scripts). Not thread-safe, like the connection.
class lua_script {
public:
  explicit lua_script(std::string source) : source_(std::move(source)) {}

  /// Runs the script. Throws broker_error(rejected) for an error reply
  /// (including an error the script raises) and broker_error(unavailable)
  /// for a connection problem.
  reply run(connection& conn, const std::vector<std::string>& keys,
            const std::vector<std::string>& args);

  /// As above, the arguments being `leading` then [first, last): a batch
  /// goes to Redis without first being copied into one vector.
  reply run(connection& conn, const std::vector<std::string>& keys,
            const std::vector<std::string>& leading,
            std::vector<std::string>::const_iterator first,
            std::vector<std::string>::const_iterator last);

  const std::string& source() const { return source_; }

private:
  void load(connection& conn);

  std::string source_;
  std::string sha_;
};

} // namespace outbox::broker
