#include "tests/actors/actor_fixture.hpp"

#include "storage/sqlite/order_store.hpp"
#include "support/test_actor_system.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

namespace outbox::test {

namespace {

/// Far more messages than any test needs; reaching it means a busy loop.
constexpr std::size_t max_messages_per_run = 100'000;

storage::db_options make_db_options(const temp_dir& dir) {
  storage::db_options options;
  options.path = dir.file("outbox.db");
  options.synchronous = "NORMAL";
  return options;
}

storage::lease_policy make_policy() {
  storage::lease_policy policy;
  policy.ttl = 1000;
  policy.batch = 16;
  policy.max_attempts = 5;
  policy.backoff_base = 10;
  policy.backoff_max = 100;
  return policy;
}

} // namespace

config::crash_settings crash_at(actors::crash_point point, double probability) {
  config::crash_settings crash;
  switch (point) {
  case actors::crash_point::relay_after_claim:
    crash.relay_after_claim = probability;
    break;
  case actors::crash_point::relay_after_publish:
    crash.relay_after_publish = probability;
    break;
  case actors::crash_point::relay_pause:
    crash.relay_pause = probability;
    break;
  case actors::crash_point::consumer_after_pop:
    crash.consumer_after_pop = probability;
    break;
  case actors::crash_point::consumer_after_effect:
    crash.consumer_after_effect = probability;
    break;
  case actors::crash_point::consumer_after_sink_commit:
    crash.consumer_after_sink_commit = probability;
    break;
  }
  return crash;
}

actor_fixture::actor_fixture()
    : db_options_(make_db_options(dir_)),
      db_(storage::sqlite::open_and_migrate(db_options_)),
      orders_(std::make_unique<storage::sqlite::order_store>(*db_)),
      clock_ms_(std::make_shared<storage::millis>(1'700'000'000'000)),
      policy_(make_policy()),
      metrics_(std::make_shared<metrics::run_metrics>()),
      broker_(std::make_shared<fake_broker>()), sys_(test_system_config(cfg_)),
      sched_(
          dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler())) {}

actor_fixture::~actor_fixture() {
  for (auto& actor : actors_)
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  run();
  actors_.clear();
  expect_no_actors_left(sys_);
}

std::size_t actor_fixture::run() {
  auto processed = sched_.run(max_messages_per_run);
  EXPECT_LT(processed, max_messages_per_run)
      << "the actors did not settle: a busy loop?";
  return processed;
}

std::size_t actor_fixture::run_interleaved() {
  auto& jobs = sched_.jobs;
  std::size_t processed = 0;
  while (!jobs.empty() && processed < max_messages_per_run) {
    auto* job = jobs.front();
    sched_.run_once();
    ++processed;
    // run_once puts an actor with more mail back at the front: send it to
    // the back of the line instead.
    if (!jobs.empty() && jobs.front() == job)
      std::rotate(jobs.begin(), jobs.begin() + 1, jobs.end());
  }
  EXPECT_LT(processed, max_messages_per_run)
      << "the actors did not settle: a busy loop?";
  return processed;
}

void actor_fixture::advance(storage::millis total, storage::millis step) {
  while (total > 0) {
    auto delta = std::min(step, total);
    *clock_ms_ += delta;
    sched_.advance_time(std::chrono::milliseconds(delta));
    run();
    total -= delta;
  }
}

void actor_fixture::advance_until(const std::function<bool()>& done, int steps,
                                  storage::millis step) {
  for (int i = 0; i < steps && !done(); ++i)
    advance(step);
}

std::string actor_fixture::advance_until_status(const std::string& event_id,
                                                const std::string& status,
                                                int steps) {
  advance_until([&] { return status_of(event_id) == status; }, steps);
  return status_of(event_id);
}

actors::relay_setup
actor_fixture::relay_config(const std::string& name,
                            config::crash_settings crash,
                            std::shared_ptr<metrics::run_metrics> metrics) {
  actors::relay_setup setup;
  setup.name = name;
  setup.db = db_options_;
  setup.lease = policy_;
  setup.poll_interval_ms = 10;
  setup.idle_poll_max_ms = 100;
  setup.crash = crash;
  setup.make_publisher = fake_publisher_factory(broker_);
  setup.clock = [clock = clock_ms_] { return *clock; };
  setup.monotonic = setup.clock;
  setup.metrics = metrics ? std::move(metrics) : metrics_;
  return setup;
}

caf::actor actor_fixture::spawn_relay(actors::relay_setup setup) {
  auto relay = caf::actor_cast<caf::actor>(sys_.spawn(
      actors::relay, std::move(setup), actors::ready_listener_actor{}));
  actors_.push_back(relay);
  return relay;
}

caf::actor actor_fixture::track(caf::actor actor) {
  actors_.push_back(actor);
  return actor;
}

std::shared_ptr<exit_record> actor_fixture::watch(const caf::actor& actor) {
  auto record = std::make_shared<exit_record>();
  actor->attach_functor([record](const caf::error& reason) {
    record->exited = true;
    record->reason = reason;
  });
  return record;
}

void actor_fixture::shut_down(const caf::actor& actor) {
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  run();
}

void actor_fixture::nudge(const caf::actor& actor) {
  caf::anon_send(actor, actors::nudge_atom_v);
}

storage::placed_order actor_fixture::place_order(const std::string& sku,
                                                 std::int64_t qty) {
  return orders_->place_order({std::nullopt, sku, qty}, now());
}

std::vector<std::string>
actor_fixture::place_orders(std::initializer_list<const char*> skus,
                            std::int64_t qty) {
  std::vector<std::string> ids;
  for (const auto* sku : skus)
    ids.push_back(place_order(sku, qty).event_id);
  return ids;
}

storage::appended_event actor_fixture::append(const std::string& aggregate_id,
                                              const std::string& event_type,
                                              const std::string& payload) {
  return orders_->append_event({aggregate_id, event_type, payload}, now());
}

std::int64_t actor_fixture::column_int(const std::string& column,
                                       const std::string& event_id) {
  SQLite::Statement query{*db_, "SELECT COALESCE(" + column +
                                    ", 0) FROM outbox WHERE event_id = ?"};
  query.bind(1, event_id);
  if (!query.executeStep())
    throw std::runtime_error("no outbox row " + event_id);
  return query.getColumn(0).getInt64();
}

std::string actor_fixture::column_text(const std::string& column,
                                       const std::string& event_id) {
  SQLite::Statement query{*db_, "SELECT COALESCE(" + column +
                                    ", '') FROM outbox WHERE event_id = ?"};
  query.bind(1, event_id);
  if (!query.executeStep())
    throw std::runtime_error("no outbox row " + event_id);
  return query.getColumn(0).getString();
}

std::string actor_fixture::status_of(const std::string& event_id) {
  return column_text("status", event_id);
}

std::string actor_fixture::owner_of(const std::string& event_id) {
  return column_text("owner", event_id);
}

std::int64_t actor_fixture::attempts_of(const std::string& event_id) {
  return column_int("attempts", event_id);
}

std::int64_t actor_fixture::published_at_of(const std::string& event_id) {
  return column_int("published_at", event_id);
}

std::string actor_fixture::payload_of(const std::string& event_id) {
  return column_text("payload", event_id);
}

std::int64_t actor_fixture::created_at_of(const std::string& event_id) {
  return column_int("created_at", event_id);
}

std::string actor_fixture::last_error_of(const std::string& event_id) {
  return column_text("last_error", event_id);
}

std::int64_t actor_fixture::count_status(const std::string& status) {
  SQLite::Statement query{*db_, "SELECT COUNT(*) FROM outbox WHERE status = ?"};
  query.bind(1, status);
  query.executeStep();
  return query.getColumn(0).getInt64();
}

bool has_code(const caf::error& error, caf::exit_reason reason) {
  auto expected = caf::make_error(reason);
  return error && error.category() == expected.category() &&
         error.code() == expected.code();
}

} // namespace outbox::test
