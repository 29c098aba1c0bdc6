#pragma once

#include "actors/crash_injector.hpp"
#include "actors/messages.hpp"
#include "actors/relay.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/order_store.hpp"
#include "storage/sqlite/database.hpp"
#include "support/outbox_tables.hpp"
#include "support/temp_dir.hpp"
#include "tests/actors/fakes.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace outbox::test {

/// Crash settings under which `point` strikes with `probability` (on every
/// roll by default) and no other point does.
config::crash_settings crash_at(actors::crash_point point,
                                double probability = 1);

/// How an actor ended, filled in when it terminates.
struct exit_record {
  bool exited = false;
  caf::error reason;
};

/// A deterministic actor system (CAF's test coordinator: nothing runs until
/// the test says so, time is virtual) over a migrated SQLite file, a manual
/// wall clock that moves in lockstep with the coordinator's virtual time, and
/// a fake broker. Every spawned actor is shut down when the test ends.
class actor_fixture : public ::testing::Test {
protected:
  actor_fixture();
  ~actor_fixture() override;

  // -- time and scheduling --

  /// The manual wall clock (what relay_setup::clock returns).
  storage::millis now() const { return *clock_ms_; }

  /// Runs every pending message until no actor has work left (delayed
  /// messages stay pending). Fails the test if it does not settle.
  std::size_t run();

  /// Like run(), but round-robin, one message per actor per turn (run()
  /// lets an actor with mail go on until its mailbox is empty), so that
  /// actors interleave as they may on real threads.
  std::size_t run_interleaved();

  /// Moves the manual clock and the virtual time forward together, `step`
  /// at a time, firing due timers and running after each step.
  void advance(storage::millis total, storage::millis step = 10);

  /// Advances `step` at a time until `done()` holds, `steps` times at most.
  void advance_until(const std::function<bool()>& done, int steps,
                     storage::millis step = 100);

  /// Advances 100 ms at a time until `event_id` has `status`, `steps` times
  /// at most; returns the status it has then.
  std::string advance_until_status(const std::string& event_id,
                                   const std::string& status, int steps);

  // -- actors --

  /// A relay_setup on the fixture's database, clock, broker and policy_.
  /// `metrics` defaults to the fixture's shared metrics_.
  actors::relay_setup
  relay_config(const std::string& name, config::crash_settings crash = {},
               std::shared_ptr<metrics::run_metrics> metrics = nullptr);

  /// Spawns a relay on the test coordinator (not detached); call run() to
  /// let it start and claim.
  caf::actor spawn_relay(actors::relay_setup setup);

  /// Shuts `actor` down with the fixture's other actors when the test ends.
  caf::actor track(caf::actor actor);

  /// Records how `actor` ends.
  std::shared_ptr<exit_record> watch(const caf::actor& actor);

  /// Sends exit(user_shutdown) to `actor` and runs until idle.
  void shut_down(const caf::actor& actor);

  /// Sends a nudge to `actor` (as the writer does after a commit).
  void nudge(const caf::actor& actor);

  // -- database --

  /// Places an order now; returns what the store wrote.
  storage::placed_order place_order(const std::string& sku, std::int64_t qty);

  /// Places an order of `qty` per sku, in turn; returns their event ids.
  std::vector<std::string> place_orders(std::initializer_list<const char*> skus,
                                        std::int64_t qty);

  /// Appends a follow-up event to `aggregate_id` now.
  storage::appended_event append(const std::string& aggregate_id,
                                 const std::string& event_type,
                                 const std::string& payload = "{}");

  /// The outbox row's status, owner ("" when NULL), attempts...
  std::string status_of(const std::string& event_id);
  std::string owner_of(const std::string& event_id);
  std::int64_t attempts_of(const std::string& event_id);
  std::int64_t published_at_of(const std::string& event_id);
  std::string payload_of(const std::string& event_id);
  std::int64_t created_at_of(const std::string& event_id);
  std::string last_error_of(const std::string& event_id);
  /// Rows with this status.
  std::int64_t count_status(const std::string& status);

  // -- members, in construction order --

  temp_dir dir_;
  storage::db_options db_options_;
  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<storage::order_store> orders_;
  std::shared_ptr<storage::millis> clock_ms_;
  /// Short ttl and fast backoff so tests need little virtual time.
  storage::lease_policy policy_;
  std::shared_ptr<metrics::run_metrics> metrics_;
  std::shared_ptr<fake_broker> broker_;
  // The system keeps a reference to its config: the config comes first.
  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  caf::scheduler::test_coordinator& sched_;

private:
  std::int64_t column_int(const std::string& column,
                          const std::string& event_id);
  std::string column_text(const std::string& column,
                          const std::string& event_id);

  std::vector<caf::actor> actors_;
};

/// True when `error` is `code` of the outbox category.
using actors::has_code;

/// True when `error` is the exit reason `reason`.
bool has_code(const caf::error& error, caf::exit_reason reason);

} // namespace outbox::test
