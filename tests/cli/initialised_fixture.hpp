#pragma once

#include "tests/cli/cli_fixture.hpp"

#include "broker/connection.hpp"
#include "support/redis_server.hpp"

#include <string>
#include <vector>

namespace outbox::test {

/// The binary on an initialised database and a private Redis, whose state a
/// test writes by hand through `conn_`.
class initialised_fixture : public cli_fixture {
protected:
  void SetUp() override {
    auto r = outbox({"init"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  /// Runs outbox with `args` against this Redis.
  process_result outbox_r(std::vector<std::string> args) {
    return outbox(std::move(args), {"--redis", redis_.endpoint().to_string()});
  }

  redis_server redis_;
  broker::connection conn_{redis_.connection_options()};
};

} // namespace outbox::test
