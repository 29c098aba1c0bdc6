#pragma once

#include "actors/log_lines.hpp"
#include "actors/ports.hpp"
#include "actors/progress_line.hpp"
#include "actors/relay.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <set>
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
  clock_function clock;
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

/// A supervised relay or consumer position; its actor changes on restart.
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
  caf::actor actor;
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

/// The coordinator: spawns and monitors the writer, load generator, relays
/// and consumers; restarts a crashed relay or consumer under a new name
/// (recovering a dead consumer's processing list first) within the restart
/// budget; decides when a bounded run is done; answers run_atom with the
/// report JSON once everything has stopped.
struct coordinator_state {
  static inline const char* name = "coordinator";

  coordinator_setup setup;
  std::unique_ptr<pipeline_port> probe;
  caf::actor writer;
  caf::actor load;
  std::vector<worker_slot> slots;
  bool load_done = false;
  /// The load generator was told to start (start_load).
  bool load_started = false;
  /// Relays that told they are ready (their first cycle has run).
  int relays_ready = 0;
  bool stopping = false;
  /// Why the run failed (restart budget, writer died...); empty if it did not.
  std::string failure;
  std::optional<caf::response_promise> run_request;
  std::optional<std::string> report;
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
  /// Every child ever spawned (exit messages from them are expected).
  std::set<caf::actor_addr> children;
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
};

using coordinator_actor = caf::stateful_actor<coordinator_state>;

/// Messages: (run_atom) -> report JSON (std::string) at the end;
/// (shutdown_atom) stops gracefully.
caf::behavior coordinator(coordinator_actor* self, coordinator_setup setup);

/// The relay / consumer name of a slot's incarnation:
/// "<role>-<prefix>-<index>-<restart>".
std::string worker_name(const std::string& prefix, worker_slot::role kind,
                        int index, int restarts);

} // namespace outbox::actors
