#pragma once

// The coordinator's decisions, free of CAF: the slots of the relays and
// consumers it supervises, their names and restart budget, what a child's
// down means, when a bounded run has drained or stalled, what each periodic
// check does next, and when the load starts. The coordinator actor
// (coordinator.cpp) spawns, sends and sets the timers the answers ask for.

#include "actors/consumer_core.hpp"
#include "actors/log_lines.hpp"
#include "actors/ports.hpp"
#include "actors/progress_line.hpp"
#include "actors/receipts.hpp"
#include "actors/writer_core.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/clock.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace outbox::actors {

struct coordinator_setup {
  config::settings settings;
  /// End by itself once the load is committed and everything it is
  /// responsible for has drained; otherwise run until shutdown_atom.
  bool until_drained = false;
  /// The command that runs it ("run", "relay", "consume", "write"): the
  /// report's header.
  std::string role = "run";
  /// Spawn the blocking actors (writer, relays, consumers) detached, on
  /// their own threads. Off in deterministic tests.
  bool detached = true;
  /// Prefix of every relay and consumer name: host and pid, so names are
  /// unique across processes sharing one database.
  std::string name_prefix;
  std::function<std::unique_ptr<publish_port>()> make_publisher;
  /// A consumer's port whose pops and applies carry the fence of the lock
  /// acquisition `token` ("" for none: no lock in use).
  std::function<std::unique_ptr<consume_port>(const std::string& token)>
      make_consume_port;
  std::function<std::unique_ptr<pipeline_port>()> make_probe;
  /// Who this process is in the consumers' lock (broker/consumer_lock.hpp);
  /// each acquisition's token is "<holder>#<n>". Its consumers run only
  /// while it holds the lock, with that acquisition's fence. It is also the
  /// process's name in the relay heartbeats (broker/relay_presence.hpp).
  /// Empty: no lock and no heartbeat
  /// (consumers always run; for tests and tools with one consuming process
  /// by construction).
  std::string consumer_lock_holder;
  storage::clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
  /// Called with what the progress line shows (at most every
  /// progress_interval_ms); the caller fits it to its terminal
  /// (progress_text). May be empty.
  std::function<void(const run_progress&)> progress;
  /// Also how often the consumers' lock is renewed.
  int check_interval_ms = config::consumer_lock_renewal_ms;
  int progress_interval_ms = 1000;
  /// How long the end of a run waits for Redis or the database to come
  /// back when they are out just as it reads the final state.
  storage::millis final_read_patience_ms = 30'000;
  /// How an injected recovery pause (crash.recovery_pause_ms) freezes the
  /// coordinator for the given ms. Empty: it sleeps, blocking its thread
  /// like a stopped process; deterministic tests stand in for it.
  std::function<void(storage::millis)> freeze;
};

/// A supervised relay or consumer position; the actor of its current
/// incarnation is the coordinator actor's (coordinator_state::workers, at
/// the same position).
struct worker_slot {
  enum class role { relay, consumer };
  role kind = role::relay;
  int index = 0;
  /// Crashes restarted (the restart budget counts these).
  int restarts = 0;
  /// Incarnations started after the first: crashes restarted, and starts
  /// after the consumers' lock came back. Names the incarnation.
  int incarnation = 0;
  std::string name;
  bool running = false;
  /// Why the last incarnation went down, for the restart line.
  std::string down_reason;
  /// Failed attempts to recover a dead consumer's entries before its
  /// restart: warned about once, not on every retry.
  outage recovery;
  /// A consumer stopped (or fenced) because another process holds the
  /// consumers' lock: not restarted until the lock is ours again.
  bool parked = false;
};

/// The relay / consumer name of a slot's incarnation:
/// "<role>-<prefix>-<index>-<restart>".
std::string worker_name(const std::string& prefix, worker_slot::role kind,
                        int index, int restarts);

/// How a relay or consumer went down, as far as the decisions go.
struct worker_exit {
  /// The outbox error it ended with (ec::none for any other reason).
  ec code = ec::none;
  /// The exit reason as a log line shows it ("outbox: injected_crash ...",
  /// "normal exit").
  std::string text;
};

/// What follows a relay's or consumer's down (coordinator_core::worker_down).
struct down_next {
  enum class what {
    /// Nothing: the run stops, or the slot waits for the consumers' lock.
    nothing,
    /// The fence refused it: every consumer of this process stops, not
    /// restarted, until the lock is this process's again (`why`).
    lose_consumers,
    /// The run stops with the failure `why`.
    stop,
    /// Its next incarnation starts (coordinator_core::restart).
    restart,
  };
  what next = what::nothing;
  std::string why = {};
};

/// What a restart comes to (coordinator_core::restart).
struct restart_next {
  enum class what {
    /// Nothing: the run stops, the slot runs, or it waits for the lock.
    nothing,
    /// Spawn the slot's next incarnation, then say so (restarted()); if
    /// it cannot be spawned, the run stops with `why`.
    start,
    /// Its entries could not be recovered: try again after `delay_ms`.
    retry_later,
    /// The fence refused the recovery (said already): every consumer of
    /// this process stops until the lock is its again (`why`).
    lose_consumers,
  };
  what next = what::nothing;
  int delay_ms = 0;
  std::string why = {};
  /// The in-flight entries put back, the name of the incarnation that went
  /// down, and how long the restart waited for Redis (0: it did not).
  std::size_t recovered = 0;
  std::string old_name = {};
  storage::millis waited_ms = 0;
};

/// What follows a periodic check (coordinator_core::check).
struct check_next {
  enum class what {
    /// The next check after `delay_ms`.
    check_later,
    /// The run stops: `why` is "" when it drained, else its failure.
    stop,
  };
  what next = what::check_later;
  int delay_ms = 0;
  std::string why = {};
};

/// What the coordinator knows of its run and decides from it: the plain
/// part of its state (coordinator_state adds the actors' handles). The
/// rules of coordinator_progress.hpp, the presence notes and the report
/// read these fields.
struct coordinator_core {
  coordinator_setup setup;
  std::unique_ptr<pipeline_port> probe;
  std::vector<worker_slot> slots;
  bool load_done = false;
  /// The load generator was told to start (start_load).
  bool load_started = false;
  /// Relays that told they are ready (their first cycle has run).
  int relays_ready = 0;
  bool stopping = false;
  /// Why the run failed (restart budget, writer died...); empty if it did not.
  std::string failure;
  storage::millis started_at = 0;
  storage::millis ended_at = 0;
  storage::millis last_progress = 0;
  /// When the stores were last counted in full, and how long that took:
  /// the progress line's counts are refreshed no more often than
  /// full_count_spacing times that (counting grows with the outbox).
  storage::millis last_full_read = 0;
  storage::millis full_read_took = 0;
  /// The last full count, and this process's rows written and acked then:
  /// between counts the line moves its PENDING and PUBLISHED by what this
  /// process did since (other processes' work shows at the next count).
  metrics::pipeline_snapshot counted;
  std::int64_t written_at_count = 0;
  std::int64_t acked_at_count = 0;
  /// run_metrics::paused_batches, read just before the stores are: a batch
  /// paused after that read still holds SENDING rows the read sees.
  std::int64_t paused_batches = 0;
  /// The last snapshot with, for a store that did not answer, the figures
  /// it last gave: what the progress line shows during an outage.
  metrics::pipeline_snapshot last_known;
  /// Actors still to go down before the report is written.
  std::size_t alive = 0;
  /// The counts at the last change, and when they changed (stall rule).
  std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t,
             std::int64_t, std::int64_t, std::int64_t, std::int64_t,
             std::int64_t>
      progress_signature;
  storage::millis last_movement = 0;
  /// This process's events at the last progress line, and when: the
  /// window of its events/s.
  std::int64_t rate_count = 0;
  storage::millis rate_at = 0;
  /// A bounded run stopped on request (SIGINT, SIGTERM) before it ended by
  /// itself: what it left undone is reported, not counted as a violation.
  bool interrupted = false;
  /// Every child is down; the report is being written.
  bool all_down = false;
  /// In the behavior's setup: a report written now waits for run_atom.
  bool starting = false;
  /// An outage met while reading the final state: logged once.
  outage final_read;
  /// Stopped on request (shutdown_atom, an exit from outside): the final
  /// read does not wait for the stores.
  bool stop_waiting = false;
  /// This process holds the consumers' lock and its consumers run (always
  /// true without a lock once started).
  bool consuming = false;
  /// The other process this one waits behind, as last logged.
  std::string standby_behind;
  /// The token of the lock acquisition this process holds ("" for none),
  /// and how many acquisitions it made.
  std::string lock_token;
  int lock_acquisitions = 0;
  /// Failed attempts to renew or acquire the lock, and to start the
  /// consumers once it is held: each warned about once.
  outage lock_trouble;
  outage start_trouble;
  /// When this process last noted its relays' heartbeat (0: never), and
  /// how many relays ran then.
  storage::millis relay_noted_at = 0;
  int relays_noted = 0;
  /// Failed heartbeats: warned about once per stretch.
  outage relay_note_trouble;

  /// Takes the setup and starts the clocks of the stall rule, the
  /// progress line and the events/s window.
  void begin(coordinator_setup given);

  /// The run's slots, relays first, none started yet.
  void plan_slots();

  /// Counts the slot's current incarnation running and alive: called once
  /// it is spawned.
  void started(worker_slot& slot);

  /// What a consumer of the slot's current incarnation is given.
  consumer_setup consumer_setup_for(const worker_slot& slot) const;

  /// What the writer is given.
  writer_setup writer_setup_of() const;

  /// The run's id for the load generator's request ids.
  std::string run_id() const;

  /// Records the run's failure (the first one, warned about) and begins to
  /// stop: true the first time, when every child must be told to exit.
  bool begin_stop(std::string why);

  /// A child went down: one fewer to wait for.
  void child_down();

  /// A relay or consumer went down: what follows. Budget spent, a first
  /// start that failed, the fence: see down_next.
  down_next worker_down(worker_slot& slot, const worker_exit& exit);

  /// Prepares the slot's next incarnation: a dead consumer's entries go
  /// back to the head of their queues first, so order and delivery survive
  /// the crash; if Redis cannot be reached for that, the slot waits and
  /// tries again rather than letting a new consumer overtake them.
  restart_next restart(worker_slot& slot);

  /// Says the slot's new incarnation is up, with why and how long it took.
  void restarted(const worker_slot& slot, const restart_next& plan) const;

  /// The fence refused recovering `what`: counts the refusal, says so, and
  /// leaves consuming (its consumers stop until it acquires the lock anew).
  void recovery_refused(const std::string& what, const std::exception& e);

  /// The periodic check, once the consumers' lock is seen to: notes the
  /// relays' heartbeat, says a standing refusal, reads the stores (lightly,
  /// or in full when a count is due), shows the progress line when due, and
  /// ends a bounded run that drained or stalled.
  check_next check();

  /// A relay says its first cycle has run: true once all have.
  bool relay_ready();

  /// Whether to tell the load generator to start now (once: the relays
  /// ready, or the patience spent), while it lives and the run goes on.
  bool start_load(bool load_alive);

private:
  check_next check_later() const;
};

} // namespace outbox::actors
