#pragma once

namespace caf {
class actor_system_config;
}

namespace outbox::actors {

/// Registers the outbox message types and error category with a CAF
/// configuration. Call before constructing the actor_system.
void register_outbox_types(caf::actor_system_config& cfg);

/// Lets CAF's idle scheduler workers sleep on their condition variable once
/// their tight polling finds nothing, instead of polling 500 times more
/// with a 50 µs sleep each (CAF's "moderate" phase). The heavy actors run
/// detached; the scheduled ones (coordinator, load generator, requesters)
/// leave the workers idle most of the time, and those sleeps cost a
/// writer-only run about a third of its CPU on a 2-core VM. A job sent from
/// outside the scheduler's threads (a detached actor's reply) wakes its
/// sleeping worker (external_enqueue notifies); one a scheduled actor sends
/// goes to its own worker's queue, which that worker runs next. For
/// `outbox run`, `bench` and `lab`.
void tune_scheduler(caf::actor_system_config& cfg);

/// Switches a configuration to CAF's deterministic test coordinator
/// (virtual time, messages run only when the test says so).
void use_test_coordinator(caf::actor_system_config& cfg);

} // namespace outbox::actors
