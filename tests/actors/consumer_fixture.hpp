#pragma once

// The pipeline fixture seen from consumers: the fake broker's lists by name
// and the event ids they hold, shared by the consumer tests (batches,
// recovery after a crash, Redis errors).

#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "tests/actors/pipeline_fixture.hpp"

#include <caf/actor.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>
#include <variant>
#include <vector>

namespace outbox::test {

class consumer_fixture : public pipeline_fixture {
protected:
  const std::string& queue() const { return broker_->queue; }
  std::string processing(const std::string& consumer,
                         const std::string& queue_name = "") {
    broker::keys names;
    names.queue = broker_->queue;
    return names.processing_for(queue_name.empty() ? queue() : queue_name,
                                consumer);
  }
  std::deque<std::string>& list(const std::string& name) {
    return broker_->lists[name];
  }
  /// The event ids of a list, head first.
  std::vector<std::string> ids_in(const std::string& name) {
    std::vector<std::string> ids;
    for (const auto& text : list(name))
      ids.push_back(
          std::get<broker::event_entry>(broker::decode(text)).event_id);
    return ids;
  }

  /// Enqueues events 1..last of `aggregate_id` on the default queue (the
  /// first an OrderPlaced of one apple).
  void enqueue_events(const std::string& aggregate_id, std::int64_t last) {
    for (std::int64_t seq = 1; seq <= last; ++seq)
      enqueue(queue(), aggregate_id, seq);
  }

  /// Spawns consumer `name` on the default queue, popping `burst` entries
  /// at a time.
  caf::actor spawn_bursting(const std::string& name, int burst,
                            config::crash_settings crash = {}) {
    auto setup = consumer_config(name, {}, crash);
    setup.burst = burst;
    return spawn_consumer(std::move(setup));
  }

  /// Runs until `consumer` has settled and checks that it died of the crash
  /// it was set up to inject.
  void expect_injected_crash(const caf::actor& consumer) {
    auto exit = watch(consumer);
    run();
    ASSERT_TRUE(exit->exited);
    EXPECT_TRUE(has_code(exit->reason, actors::ec::injected_crash))
        << render(exit->reason);
  }

  /// Puts what the dead consumer `dead` left in its processing list back
  /// at the head of the queue, as the coordinator does before a restart;
  /// returns how many entries went back.
  std::size_t recover(const std::string& dead) {
    fake_consume_port port{broker_};
    return port.recover(processing(dead), queue());
  }

  /// Every entry taken by `consumer` went through: `consumed` effects,
  /// `duplicates` absorbed, no aggregate out of order, and neither the
  /// queue nor its processing list holds anything.
  void expect_drained(const std::string& consumer, std::int64_t consumed,
                      std::int64_t duplicates) {
    EXPECT_EQ(broker_->consumed, consumed);
    EXPECT_EQ(broker_->duplicates, duplicates);
    EXPECT_EQ(broker_->order_violations, 0);
    EXPECT_TRUE(list(queue()).empty());
    EXPECT_TRUE(list(processing(consumer)).empty());
  }
};

} // namespace outbox::test
