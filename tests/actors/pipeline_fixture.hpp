#pragma once

// The deterministic actor fixture extended to the writer, consumers and the
// coordinator: their setups on the fixture's database, clock and fake broker,
// a fake pipeline port for the coordinator, and small requester actors that
// record the replies they get (a scoped_actor cannot wait on the test
// coordinator: nothing would run the actors it waits for).

#include "actors/consumer.hpp"
#include "actors/coordinator.hpp"
#include "actors/crash_injector.hpp"
#include "actors/messages.hpp"
#include "actors/writer.hpp"
#include "config/settings.hpp"
#include "tests/actors/actor_fixture.hpp"
#include "tests/actors/fakes.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

/// The answer a requester actor got: a value or an error, once it arrived.
template <class T>
struct reply {
  bool arrived = false;
  std::optional<T> value;
  caf::error error;
};

/// One incarnation's wanted crash rolls: `strikes[i]` is whether its i-th
/// roll at the point must strike.
struct wanted_rolls {
  std::string actor_name;
  std::vector<bool> strikes;
};

/// The first seed (from 1) under which crash_injector rolls exactly as
/// wanted at `point` with probability `probability`, so that a test can make
/// one incarnation crash and the next one not. Throws if there is none
/// below 100000.
std::uint64_t seed_where(actors::crash_point point, double probability,
                         const std::vector<wanted_rolls>& wanted);

class pipeline_fixture : public actor_fixture {
protected:
  pipeline_fixture();

  /// sys_.render(error), which crashes on an empty error: "(no error)".
  std::string render(const caf::error& error);

  /// The reply of a requester actor, which is tracked like every actor a
  /// test spawns.
  template <class T>
  std::shared_ptr<reply<T>>
  tracked(std::pair<caf::actor, std::shared_ptr<reply<T>>> requester) {
    track(requester.first);
    return requester.second;
  }

  // -- writer --

  actors::writer_setup writer_config(int commit_batch, int commit_delay_ms);
  caf::actor spawn_writer(actors::writer_setup setup);

  /// A requester actor sends (place, request_id, sku, qty) to `writer`.
  std::shared_ptr<reply<actors::order_receipt>>
  place_via(const caf::actor& writer, const std::string& request_id,
            const std::string& sku, std::int64_t qty);

  /// A requester actor sends (append, aggregate_id, event_type, payload).
  std::shared_ptr<reply<actors::event_receipt>>
  append_via(const caf::actor& writer, const std::string& aggregate_id,
             const std::string& event_type, const std::string& payload = "{}");

  /// A requester actor sends (place_batch, tickets) to `writer`.
  std::shared_ptr<reply<std::vector<actors::order_outcome>>>
  place_batch_via(const caf::actor& writer,
                  std::vector<actors::order_ticket> tickets);

  /// A requester actor sends (append_batch, tickets) to `writer`.
  std::shared_ptr<reply<std::vector<actors::event_outcome>>>
  append_batch_via(const caf::actor& writer,
                   std::vector<actors::event_ticket> tickets);

  /// An actor that counts the nudges it gets (a stand-in relay).
  std::pair<actors::relay_actor, std::shared_ptr<int>> spawn_nudge_counter();

  /// The sku and qty of order `order_id` (empty sku when there is none).
  std::pair<std::string, std::int64_t> order_row(std::int64_t order_id);
  /// SELECT COUNT(*) FROM `table`.
  std::int64_t count_rows(const std::string& table);

  // -- consumer --

  /// Entries of the fake broker's default queue are consumed by default.
  actors::consumer_setup consumer_config(const std::string& name,
                                         std::vector<std::string> queues = {},
                                         config::crash_settings crash = {});
  caf::actor spawn_consumer(actors::consumer_setup setup);

  /// Pushes an encoded entry to the tail of `queue`.
  void enqueue(const std::string& queue, const std::string& aggregate_id,
               std::int64_t seq, const std::string& sku = "apple",
               std::int64_t qty = 1);
  /// The event id enqueue() gives (aggregate_id, seq).
  static std::string event_id_of(const std::string& aggregate_id,
                                 std::int64_t seq);

  // -- coordinator --

  /// One relay, no consumer, no orders, one partition (the fake publisher's
  /// list), the fixture's database and lease policy, quick polls.
  config::settings pipeline_settings();
  actors::coordinator_setup coordinator_config(config::settings settings,
                                               bool until_drained = false);
  actors::coordinator_handle spawn_coordinator(actors::coordinator_setup setup);

  /// The name of the first slot's `restarts`-th incarnation of `role`.
  std::string worker(actors::worker_slot::role role, int restarts) const {
    return actors::worker_name(prefix_, role, 0, restarts);
  }

  /// The coordinator's state, to find its children. Only while it is alive.
  actors::coordinator_state&
  coordinator_of(const actors::coordinator_handle& coordinator);

  /// The actor of `slot`'s current incarnation (empty while it is down).
  caf::actor worker_of(const actors::coordinator_handle& coordinator,
                       const actors::worker_slot& slot);

  using actor_fixture::watch;
  /// Records when `coordinator` exits, and why.
  std::shared_ptr<exit_record>
  watch(const actors::coordinator_handle& coordinator);

  /// A requester actor asks `coordinator` for the report (run_atom).
  std::shared_ptr<reply<std::string>>
  request_report(const actors::coordinator_handle& c);

  /// A coordinator and the report it will answer with when its run ends.
  struct started_run {
    actors::coordinator_handle coordinator;
    std::shared_ptr<reply<std::string>> report;
  };

  /// Spawns a coordinator from `setup`, asks for its report and runs until
  /// nothing has work left: the children have started and polled once.
  started_run start_run(actors::coordinator_setup setup);

  /// A bounded run (until drained) of pipeline_settings().
  actors::coordinator_setup bounded_config() {
    return coordinator_config(pipeline_settings(), true);
  }

  /// The report a run ended with, parsed. Throws, which fails the test,
  /// when the run has not ended or ended with an error instead.
  nlohmann::json report_json(const reply<std::string>& report);

  /// Whether the run ended with a report that is not ok and whose
  /// violations mention `text`.
  testing::AssertionResult failed_with(const reply<std::string>& report,
                                       const std::string& text);

  /// Sends (shutdown_atom) to `coordinator`.
  void request_shutdown(const actors::coordinator_handle& coordinator);

  /// The snapshot of the fixture's database (outbox counts by status) plus
  /// the fake broker's queue and inbox counts.
  metrics::pipeline_snapshot snapshot_from_stores();

  std::shared_ptr<fake_pipeline> pipeline_;
  std::string prefix_ = "test";
};

} // namespace outbox::test
