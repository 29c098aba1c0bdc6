#pragma once

#include "actors/crash_injector.hpp"
#include "actors/log_lines.hpp"
#include "actors/ports.hpp"
#include "actors/relay.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"

#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <cstddef>
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
  /// Most entries per batch: one pop_batch, one inbox script call and one
  /// remove_batch each (three round trips). One batch per message, so exits
  /// are seen between batches.
  int burst = 256;
  /// Most bytes per batch (one entry at least, whatever its size): bounds
  /// what one script call carries, with entries up to
  /// broker.max_consume_bytes.
  std::size_t batch_bytes = 4u << 20;
  /// The port's pops and applies carry the consumers' fence: stop, with
  /// ec::consumer_fenced, once the fence refuses a call.
  bool fenced = false;
  config::crash_settings crash;
  std::function<std::unique_ptr<consume_port>()> make_port;
  clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// A consumer: reliable pop -> dedup+effect (one Lua script) -> remove, a
/// batch at a time.
struct consumer_state {
  static inline const char* name = "consumer";

  consumer_setup setup;
  std::unique_ptr<consume_port> port;
  std::unique_ptr<crash_injector> crashes;
  /// The owned queue the next batch is taken from first, so none starves.
  std::size_t next_queue = 0;
  /// The doorbells of the owned queues, waited on together when all are
  /// empty.
  std::vector<std::string> doorbells;
  /// After a Redis error entries may sit unapplied in a processing list:
  /// put them back at the head of their queue before popping anything new.
  bool must_recover = false;
  /// Backoff while Redis is unavailable.
  int retry_delay_ms = 0;
  /// Logged when it begins and ends, not on every retry.
  outage redis;
  /// Likewise for the database effects run in (consumer.sink).
  outage sink;
};

using consumer_actor = caf::stateful_actor<consumer_state>;

caf::behavior consumer(consumer_actor* self, consumer_setup setup);

} // namespace outbox::actors
