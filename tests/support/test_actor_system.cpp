#include "support/test_actor_system.hpp"

#include "actors/system_config.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

namespace outbox::test {

caf::actor_system_config& test_system_config(caf::actor_system_config& cfg) {
  actors::register_outbox_types(cfg);
  actors::use_test_coordinator(cfg);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  return cfg;
}

void expect_no_actors_left(caf::actor_system& sys) {
  if (auto left = sys.registry().running(); left != 0) {
    ADD_FAILURE() << left << " actors still running at the end of the test";
    sys.await_actors_before_shutdown(false);
  }
}

} // namespace outbox::test
