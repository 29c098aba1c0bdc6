#pragma once

// The deterministic actor system the actor and lab tests share: CAF's test
// coordinator runs nothing until the test says so, and its time is virtual.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

namespace outbox::test {

/// Prepares `cfg` for a test system: the outbox message types, the test
/// coordinator, and CAF's own log silenced. Returns `cfg`, for the system's
/// constructor (the system keeps a reference to it).
caf::actor_system_config& test_system_config(caf::actor_system_config& cfg);

/// Fails the test if actors of `sys` still run at its end, and lets the
/// system shut down without waiting for them: nothing but the test's thread
/// would run them, so waiting would hang.
void expect_no_actors_left(caf::actor_system& sys);

} // namespace outbox::test
