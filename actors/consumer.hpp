#pragma once

#include "actors/crash_injector.hpp"
#include "actors/ports.hpp"
#include "actors/relay.hpp"
#include "actors/run_metrics.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"

#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace outbox::actors {

/// Everything a consumer needs; the coordinator builds one per incarnation.
struct consumer_setup {
  /// Unique across restarts: names its processing lists.
  std::string name;
  broker::keys names;
  /// The queue lists this consumer owns. No other consumer reads them while
  /// it lives, which keeps per-aggregate order with several consumers.
  std::vector<std::string> queues;
  /// How long a pop blocks when every owned queue is empty.
  int block_ms = 200;
  /// Entries handled per message before yielding (so exits are seen).
  int burst = 64;
  config::crash_settings crash;
  std::function<std::unique_ptr<consume_port>()> make_port;
  clock_function clock;
  std::shared_ptr<run_metrics> metrics;
};

/// A consumer: reliable pop -> dedup+effect (one Lua script) -> remove.
struct consumer_state {
  static inline const char* name = "consumer";

  consumer_setup setup;
  std::unique_ptr<consume_port> port;
  std::unique_ptr<crash_injector> crashes;
  /// Where the next burst starts, so no owned queue starves.
  std::size_t next_queue = 0;
  /// After a Redis error an entry may sit unapplied in a processing list:
  /// put it back at the head of its queue before popping anything new.
  bool must_recover = false;
  /// Backoff while Redis is unavailable.
  int retry_delay_ms = 0;
};

using consumer_actor = caf::stateful_actor<consumer_state>;

caf::behavior consumer(consumer_actor* self, consumer_setup setup);

} // namespace outbox::actors
