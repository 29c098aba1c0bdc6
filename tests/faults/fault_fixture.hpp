#pragma once

#include "tests/faults/fault_checks.hpp"
#include "tests/faults/fault_world.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

/// Load as a stream of writer-only processes of `wave` orders each, one
/// after the other, so a scenario's load lasts as long as its fault window
/// on any machine.
class load_waves {
public:
  /// Starts wave 0 at once: `start_wave(i)` starts the i-th writer process;
  /// at most `max_waves` waves when positive.
  load_waves(int wave_orders, int max_waves,
             std::function<std::unique_ptr<child_process>(int)> start_wave);

  /// Lets `ms` pass, waiting on the current writer process and starting the
  /// next wave whenever one ends (a failed wave fails the test). Once the
  /// last wave has ended it only lets the time pass.
  void pump(int ms);

  /// Waits (bounded) for the current wave to end; returns every order
  /// committed by the waves that succeeded.
  std::int64_t finish(int timeout_ms);

  /// Accepts waves that fail because Redis is down (a writer process checks
  /// Redis at start and audits it at the end), for scenarios that kill it;
  /// their orders are then unknown here (the database has them).
  void tolerate_redis_outages() { tolerated_.emplace_back("Redis"); }

  /// The same for PostgreSQL going away (a wave that starts, or audits,
  /// while it is down exits 1 naming it).
  void tolerate_postgres_outages() { tolerated_.emplace_back("PostgreSQL"); }

private:
  void account(const process_result& r);

  int wave_orders_;
  int max_waves_;
  bool writing_ = true;
  std::function<std::unique_ptr<child_process>(int)> start_wave_;
  std::unique_ptr<child_process> writer_;
  int waves_ = 0;
  std::int64_t orders_ = 0;
  /// Words of a failed wave's stderr that make it an outage's.
  std::vector<std::string> tolerated_;
};

/// A fault scenario under load: the world (fault_world) with a config of
/// short leases and many attempts, an initialised database, a seeded
/// generator for the fault schedule, helpers to start `outbox run`
/// processes, and the outside checks at the end.
class fault_fixture : public fault_world {
protected:
  explicit fault_fixture(redis_server::options redis_options = {})
      : fault_world(std::move(redis_options)) {}
  explicit fault_fixture(redis_kind kind) : fault_world(kind) {}

  void SetUp() override;
  void TearDown() override;

  /// Rewrites the config with `max_attempts` and short backoffs, for
  /// scenarios where rows charged for nothing would end FAILED at once.
  void limit_attempts(int max_attempts, int ttl_ms = 500);

  /// Merges `patch` into the config file every command gets (JSON merge
  /// patch), for settings a scenario adds to the fault config.
  void patch_config(const nlohmann::json& patch);

  /// A one-number query (COUNT...) on the scenario's database, SQLite or
  /// PostgreSQL, on a connection of its own.
  std::int64_t count(const std::string& query) const;

  /// `outbox run --json` with these flags (and --until-drained if asked).
  std::vector<std::string> run_args(const std::vector<std::string>& flags,
                                    bool until_drained) const;

  /// Starts `outbox run` in the background.
  std::unique_ptr<child_process>
  start_run(const std::vector<std::string>& flags,
            bool until_drained = false) const;

  /// `outbox run --until-drained` with `relays` and `consumers` placing
  /// `orders` orders from the scenario's seed, run to its end (bounded).
  process_result run_orders(int relays, int consumers, int orders,
                            int timeout_ms = 60'000) const;

  /// A writer-only process placing `orders` orders (a share with
  /// follow-ups), exiting once they are committed. `wave` varies the seed.
  std::unique_ptr<child_process> start_writer(int orders, int wave = 0) const;

  /// Writer processes of `wave_orders` orders each, back to back; at most
  /// `max_waves` of them when positive.
  load_waves waves(int wave_orders, int max_waves = 0) const;

  /// A relay-only `outbox run`: two relays, no consumer.
  static std::vector<std::string> relay_only_flags() {
    return {"--relays", "2", "--consumers", "0"};
  }

  /// A consumer-only `outbox run`: two consumers, no relay, logging at info
  /// (its "started 0 relays" and what it recovered).
  static std::vector<std::string> consumer_only_flags() {
    return {"--relays", "0", "--consumers", "2", "--log-level", "info"};
  }

  /// SIGKILL to `victim`, waited for (bounded); fails the test unless it
  /// died of it. Returns what it wrote.
  static process_result kill_hard(child_process& victim);

  /// Kills the consumer-only process `consumer` (SIGKILL), lets the load
  /// run `pause_ms` with no consumer, and starts its successor
  /// (consumer_only_flags) in its place, returning once that has started
  /// consuming. Never two consumer processes at once. Returns what the
  /// killed one wrote.
  process_result
  replace_killed_consumer(std::unique_ptr<child_process>& consumer,
                          load_waves& load, int pause_ms) const;

  /// How long a scenario keeps breaking things under load: 8 s, times
  /// OUTBOX_CHAOS_SCALE.
  std::chrono::milliseconds fault_window() const;

  /// Stops an unbounded run with SIGTERM and returns its JSON report; fails
  /// the test if it does not exit 0 with "ok" true.
  nlohmann::json stop_gracefully(child_process& run, const std::string& what,
                                 process_result* raw = nullptr) const;

  /// What a scenario's relay and consumer processes wrote to stderr.
  struct survivors_stderr {
    std::string relays;
    std::string consumers;
  };

  /// Waits for the load, then for the pipeline to settle after `outage`;
  /// stops the relay and consumer processes, which must have lived through
  /// it all. Redis away is an outage, never a refusal that charges the rows
  /// an attempt: the relays must not say "broker refused".
  survivors_stderr settle_and_stop_survivors(load_waves& load,
                                             child_process& relays,
                                             child_process& consumers,
                                             const std::string& outage);

  /// Runs relay-only and consumer-only `--until-drained` processes side by
  /// side until nothing is left to publish or consume. Call once no other
  /// consumer process runs. Fails the test if either does not end ok.
  void drain();

  /// `outbox status --json`, parsed (null on unparsable output).
  nlohmann::json status() const;

  /// Polls the database and Redis (every 50 ms, bounded) until every outbox
  /// row is PUBLISHED, the queues and processing lists are empty and
  /// `processed` holds as many events as there are rows. False on timeout.
  bool wait_until_settled(int timeout_ms) const;

  /// The outside checks of fault_checks.hpp on this scenario's pipeline,
  /// appended to the chaos report; returns the result.
  pipeline_check finish(const std::string& scenario, std::int64_t kills);

  /// The end of a scenario that must lose nothing: drain(), then finish(),
  /// which must count the `orders` the load committed and no dead letter.
  pipeline_check drain_and_finish(const std::string& scenario,
                                  std::int64_t kills, std::int64_t orders);

  /// A random duration in [low, high] ms from the scenario's seeded
  /// generator (kill moments, outage lengths).
  int random_ms(int low, int high);

  /// Picks an index in [0, n).
  std::size_t random_index(std::size_t n);

  std::uint64_t seed_ = 0;
  std::mt19937_64 random_;
  std::chrono::steady_clock::time_point started_;
};

/// The same world with a Redis that survives SIGKILL (AOF, fsync always).
class durable_fault_fixture : public fault_fixture {
protected:
  durable_fault_fixture() : fault_fixture(redis_server::options{true}) {}
};

} // namespace outbox::test
