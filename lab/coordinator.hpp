#pragma once

#include "actors/relay.hpp"
#include "config/settings.hpp"
#include "lab/plan.hpp"
#include "lab/view.hpp"
#include "storage/types.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::lab {

/// Everything `outbox lab` hands to its coordinator.
struct lab_setup {
  /// From lab_settings: app.db in the lab folder, the seed's key names.
  config::settings settings;
  lab_files files;
  /// The steps to run, in order (one step, or full_lab_plan()).
  std::vector<lab_step> plan;
  /// Reset the lab's files and Redis keys before the first step.
  bool reset_first = false;
  /// Prefix of relay and consumer names (host and pid), so lease owners
  /// stay unique across lab runs sharing one app.db.
  std::string name_prefix;
  /// Receives each step's explanation, a line at a time.
  std::function<void(const std::string&)> say;
  /// How often a waiting step checks its end condition.
  int check_interval_ms = 20;
  /// A step waiting longer than this fails the lab.
  int step_timeout_ms = 60'000;
  /// Spawn the writer, relay and consumer detached, on threads of their own
  /// (they block on SQLite and Redis). Off in deterministic tests, where the
  /// caller's scheduler runs them beside the coordinator.
  bool detached = true;
  /// The time of the steps and of their children: step deadlines, the
  /// created_at of the rows the writer commits, the relays' leases. A test
  /// gives the virtual time of its scheduler.
  actors::clock_function clock = storage::wall_clock_now;
  /// The relays' own lease clock (relay_setup::monotonic); empty: theirs.
  actors::clock_function monotonic;
};

/// The lab coordinator: runs the plan's steps one after the other. It
/// drives the real actors (writer, relay, consumer: spawned linked and
/// monitored, stopped at the end of their step), watches each
/// step's end condition in the stores, and writes the lab's files. Every
/// step ends when its condition holds, never after a fixed sleep. Time and
/// threads come from the caller (lab_setup::clock, detached, and the system
/// it is spawned in), so a test can drive it on CAF's test coordinator.
struct lab_coordinator_state {
  static inline const char* name = "lab_coordinator";

  lab_setup setup;
  std::unique_ptr<lab_view> view;
  /// Index of the next step of the plan.
  std::size_t next_step = 0;
  lab_step current = lab_step::init;
  /// The live children of the current step (empty handles when none).
  caf::actor writer;
  caf::actor relay;
  caf::actor consumer;
  std::size_t alive = 0;
  /// Names given so far (for unique relay / consumer names).
  int spawned = 0;
  /// The current relay's name (its leases are not "someone else's").
  std::string relay_name;
  /// relay_crash: the relay spawned to crash after publishing. Its injected
  /// death is the expected outcome, not a failure.
  bool crash_expected = false;
  bool crash_seen = false;
  /// What the step waits for, polled every check_interval_ms, and what
  /// follows once it holds.
  std::function<bool()> until;
  std::function<void()> then;
  std::string waiting_for;
  storage::millis deadline = 0;
  bool check_queued = false;
  /// Runs once every child is down (see lab_stop_children).
  std::function<void()> after_stop;
  /// Step-local facts: the event or aggregate a step created, a count
  /// taken before it, whether the lease wait was announced.
  std::string event_id;
  std::string aggregate_id;
  std::int64_t before = 0;
  bool told_waiting = false;
  /// Why the lab failed; empty while it has not.
  std::string failure;
  bool finished = false;
  std::optional<caf::response_promise> result_request;
};

using lab_coordinator_actor = caf::stateful_actor<lab_coordinator_state>;

/// Messages: (run_atom) -> std::string once the plan has ended: empty when
/// every step reached its condition, else why the lab failed.
caf::behavior lab_coordinator(lab_coordinator_actor* self, lab_setup setup);

// The coordinator's mechanics, for the steps (lab/steps.cpp).

/// The lab's time now (lab_setup::clock).
storage::millis lab_now(lab_coordinator_actor* self);

/// The lab's view of the stores, for the steps.
lab_view& view(lab_coordinator_actor* self);

/// Prints one line of explanation.
void lab_say(lab_coordinator_actor* self, const std::string& line);

/// Runs `step_body`; an exception fails the lab with its message.
void lab_guard(lab_coordinator_actor* self,
               const std::function<void()>& step_body);

/// Fails the lab: stops every child, then answers run_atom with `why`.
void lab_fail(lab_coordinator_actor* self, const std::string& why);

/// Checks `until` now and then every check_interval_ms; runs `then` once it
/// holds, or fails the lab after step_timeout_ms waiting for `what`.
void lab_wait_until(lab_coordinator_actor* self, std::string what,
                    std::function<bool()> until, std::function<void()> then);

/// Sends every live child an exit and runs `then` once all are down.
void lab_stop_children(lab_coordinator_actor* self, std::function<void()> then);

/// The step is over: stops its children, then starts the next step.
void lab_step_done(lab_coordinator_actor* self);

/// Spawns the real writer on app.db, reading time from `clock` (the
/// setup's, or a frozen reading of it).
void lab_spawn_writer(lab_coordinator_actor* self,
                      actors::clock_function clock);

/// Spawns one real relay; with `crash_after_publish` it dies after its
/// first publish, before the ack (crash injection relay_after_publish = 1).
void lab_spawn_relay(lab_coordinator_actor* self, bool crash_after_publish);

/// Spawns one real consumer on `outbox.events`.
void lab_spawn_consumer(lab_coordinator_actor* self);

} // namespace outbox::lab
