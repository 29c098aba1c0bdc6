#pragma once

// A consumer's decisions, free of CAF: what one step does (recover, pop,
// apply, remove), how a crash, an outage or the fence ends it, and what
// comes next. The consumer actor (consumer.cpp) turns the answer into a
// message to itself, a timer or its exit.

#include "actors/crash_injector.hpp"
#include "actors/log_lines.hpp"
#include "actors/ports.hpp"
#include "actors/receipts.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/clock.hpp"

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
  storage::clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// How a consumer begins (consumer_core::start).
struct consumer_start {
  enum class how {
    /// Its port is open: the first step follows at once.
    consuming,
    /// It owns no partition (more consumers than broker.partitions): it
    /// stays up, idle, so the run's shape is what the user asked for.
    idle,
    /// Its port could not be opened: `why` says why.
    failed,
  };
  how result = how::consuming;
  std::string why = {};
};

/// What a consumer does after a step (consumer_core::step).
struct consumer_next {
  enum class what {
    /// A batch went through, or more may wait: the next step at once.
    step_now,
    /// The next step after `delay_ms`: 1 when every queue was empty (the
    /// doorbell wait already waited), the backoff after trouble.
    step_later,
    /// It ends with `reason` (injected_crash, consumer_fenced).
    stop,
  };
  what next = what::step_now;
  int delay_ms = 0;
  ec reason = ec::none;
};

/// A consumer: reliable pop -> dedup+effect (one Lua script) -> remove, a
/// batch at a time, from the queues it owns, round-robin.
class consumer_core {
public:
  explicit consumer_core(consumer_setup setup);
  ~consumer_core();

  /// Opens the port (said at error when it cannot, at warn when it owns no
  /// partition).
  consumer_start start();

  /// One step: recovers what trouble left in its processing lists, then
  /// takes and applies one batch, or waits for a doorbell. Never throws
  /// what the port throws: trouble becomes a backoff, a crash or the
  /// fence a stop.
  consumer_next step();

  const std::string& name() const { return setup_.name; }

private:
  enum class burst_result { crashed, busy, idle };

  burst_result burst();
  bool handle(const std::string& processing, std::vector<std::string> batch);
  void record(const std::vector<std::string>& entries,
              const std::vector<broker::applied_entry>& outcomes);
  bool report_set_aside();
  void recover_own();
  void redis_answered();
  consumer_next crash(const char* point);
  consumer_next retry_after(outage& trouble, const char* what, const char* why);

  consumer_setup setup_;
  std::unique_ptr<consume_port> port_;
  std::unique_ptr<crash_injector> crashes_;
  /// The owned queue the next batch is taken from first, so none starves.
  std::size_t next_queue_ = 0;
  /// The doorbells of the owned queues, waited on together when all are
  /// empty.
  std::vector<std::string> doorbells_;
  /// After a Redis error entries may sit unapplied in a processing list:
  /// put them back at the head of their queue before popping anything new.
  bool must_recover_ = false;
  /// Backoff while Redis is unavailable.
  int retry_delay_ms_ = 0;
  /// Logged when it begins and ends, not on every retry.
  outage redis_;
  /// Likewise for the database effects run in (consumer.sink).
  outage sink_;
};

} // namespace outbox::actors
