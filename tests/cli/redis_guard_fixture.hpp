#pragma once

#include "tests/cli/cli_fixture.hpp"

#include "support/redis_server.hpp"

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

/// The real binary against a private redis-server started with the
/// settings a test needs (an evicting policy, CONFIG renamed away, AOF).
class redis_guard_fixture : public cli_fixture {
protected:
  void start_redis(redis_server::options options = {}) {
    redis_ = std::make_unique<redis_server>(std::move(options));
  }

  std::string redis_address() const { return redis_->endpoint().to_string(); }

  /// Runs outbox with `args`, --db and --redis.
  process_result outbox_r(std::vector<std::string> args) {
    return outbox(std::move(args), {"--redis", redis_address()});
  }

  /// A short bounded run: two orders through one relay and one consumer.
  static std::vector<std::string>
  short_run(std::vector<std::string> more = {}) {
    std::vector<std::string> args{"run", "--relays", "1", "--consumers",
                                  "1",   "--orders", "2", "--until-drained"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  /// How many times `text` occurs in `haystack`.
  static std::size_t occurrences(const std::string& haystack,
                                 const std::string& text) {
    std::size_t count = 0;
    for (auto at = haystack.find(text); at != std::string::npos;
         at = haystack.find(text, at + text.size()))
      ++count;
    return count;
  }

  std::unique_ptr<redis_server> redis_;
};

} // namespace outbox::test
