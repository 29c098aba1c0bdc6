#pragma once

// The relay's and consumer's view of the broker. Production wires them to
// broker/ (adapters/redis_ports.hpp); deterministic actor tests use in-memory
// fakes. The database side needs no port: the actors use storage/ on a real
// SQLite file even in tests, with time passed in.

#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "metrics/audit_verdict.hpp"
#include "metrics/pipeline_snapshot.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::actors {

/// Where a relay pushes a claimed batch.
class publish_port {
public:
  virtual ~publish_port() = default;

  /// All entries in order, atomically, or nothing. Throws
  /// broker::broker_error (unavailable: outcome unknown; rejected: refused).
  virtual void publish(const std::vector<broker::event_entry>& entries) = 0;
};

/// The database where a consumer applies effects (consumer.sink) cannot
/// take a batch now: nothing of it was recorded in Redis, and the batch
/// stays in the processing list to be applied again.
class effects_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Thrown by a crash hook (on_sink_commit): the consumer dies there.
struct injected_crash {};

/// A consumer's reliable queue and inbox.
class consume_port {
public:
  virtual ~consume_port() = default;

  /// Waits up to `timeout_ms` for any of `doorbells` to ring (a publish to
  /// one of the consumer's queues). Returns whether one rang.
  virtual bool wait_for_doorbell(const std::vector<std::string>& doorbells,
                                 int timeout_ms) = 0;

  /// Dedup + effect, atomically. Never throws for a malformed entry.
  virtual broker::applied_entry apply(const std::string& entry) = 0;

  /// Moves up to `max_entries` entries (at most `max_bytes` together, but
  /// one at least) from the head of `queue` to `processing`, in one atomic
  /// step, oldest first. Never waits: empty when the queue is.
  virtual std::vector<std::string> pop_batch(const std::string& queue,
                                             const std::string& processing,
                                             std::size_t max_entries,
                                             std::size_t max_bytes) = 0;

  /// The sizes of the entries pop_batch dead-lettered for being over
  /// broker.max_consume_bytes, without handing them over, since the last
  /// call; clears them. None when the port has no such limit.
  virtual std::vector<std::size_t> take_set_aside() { return {}; }

  /// Dedup + effect for each entry in order, one result per entry (a repeat
  /// within the batch is a duplicate). Never throws for a malformed entry;
  /// on a Redis error a prefix of the batch may have been applied.
  virtual std::vector<broker::applied_entry>
  apply_batch(const std::vector<std::string>& entries) = 0;

  /// Called by apply_batch once the consumer's own database (consumer.sink)
  /// committed a batch, before Redis records it: a crash injected there
  /// (crash.consumer_after_sink_commit) throws out of it. Ports without a
  /// sink never call it.
  virtual void on_sink_commit(std::function<void()> hook) { (void)hook; }

  /// Removes an applied entry from the processing list.
  virtual void remove(const std::string& processing,
                      const std::string& entry) = 0;

  /// Removes applied entries from the processing list, as remove() on each
  /// in order would. Returns how many were found.
  virtual std::size_t remove_batch(const std::string& processing,
                                   const std::vector<std::string>& entries) = 0;

  /// Puts a dead consumer's in-flight entries back at the head of `queue`.
  virtual std::size_t recover(const std::string& processing,
                              const std::string& queue) = 0;
};

/// What the coordinator reads and repairs. Production: storage + broker on
/// the coordinator's own connections; deterministic tests: a fake.
class pipeline_port {
public:
  virtual ~pipeline_port() = default;

  /// Counts from the database and Redis. Never throws: trouble is reported.
  virtual metrics::pipeline_snapshot snapshot() = 0;

  /// What the coordinator reads at every check between two full snapshots,
  /// in constant time: `pending` is 1 when any row is PENDING or SENDING
  /// (0 otherwise) and `sending` 0; the database's change mark (its stall
  /// rule); Redis's figures as in snapshot() (the progress line too); the
  /// other database counts 0. A run that looks drained by it confirms with
  /// a full snapshot. Never throws.
  virtual metrics::pipeline_snapshot drain_snapshot() { return snapshot(); }

  /// Told after each processing list a recovery put back: the entries it
  /// moved and how many lists are still to do. The coordinator counts as
  /// it goes (a refusal midway keeps what was moved counted) and may pause
  /// there (crash.recovery_pause_ms).
  using recovery_step =
      std::function<void(std::size_t moved, std::size_t lists_left)>;

  /// Puts a dead consumer's in-flight entries back at the head of their
  /// queues, in order. Returns entries moved. With a lock `token` (the
  /// acquisition's; "" for none), each list's move first checks in the
  /// same script that the lock is still `token`'s: broker_error(fenced),
  /// that list untouched, when it is not. Throws broker_error.
  virtual std::size_t recover_consumer(const std::string& consumer,
                                       const std::string& token,
                                       const recovery_step& step) = 0;

  /// Recovers every processing list (a process taking the consumers' lock,
  /// or starting its consumers without one: earlier consumers are gone),
  /// fenced by `token` list by list as recover_consumer. Returns entries
  /// moved. Throws broker_error.
  virtual std::size_t recover_all(const std::string& token,
                                  const recovery_step& step) = 0;

  /// The consumers' lock (broker/consumer_lock.hpp): takes it for `token`
  /// if free; returns who holds it after the call. Throws broker_error.
  virtual std::string acquire_consumer_lock(const std::string& token,
                                            std::int64_t ttl_ms) = 0;

  /// Extends it if `token` holds it; returns who holds it ("" if nobody).
  /// Throws broker_error.
  virtual std::string renew_consumer_lock(const std::string& token,
                                          std::int64_t ttl_ms) = 0;

  /// Gives it up if `token` holds it. Throws broker_error.
  virtual void release_consumer_lock(const std::string& token) = 0;

  /// The relay heartbeat (broker/relay_presence.hpp): `process` runs
  /// `relays` relays now; the note holds for `ttl_ms` unless renewed.
  /// Throws broker_error.
  virtual void note_relays(const std::string& process, int relays,
                           std::int64_t ttl_ms) = 0;

  /// `process` stopped its relays on purpose. Throws broker_error.
  virtual void relays_stopped(const std::string& process) = 0;

  /// The conservation verdict (audit::evaluate). Throws what the stores
  /// throw (is_outage tells an outage from a fault).
  virtual metrics::audit_verdict audit() = 0;
};

} // namespace outbox::actors
