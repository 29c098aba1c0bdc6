#pragma once

namespace caf {
class actor_system_config;
}

namespace outbox::actors {

/// Registers the outbox message types and error category with a CAF
/// configuration. Call before constructing the actor_system.
void register_outbox_types(caf::actor_system_config& cfg);

/// Switches a configuration to CAF's deterministic test coordinator
/// (virtual time, messages run only when the test says so).
void use_test_coordinator(caf::actor_system_config& cfg);

} // namespace outbox::actors
