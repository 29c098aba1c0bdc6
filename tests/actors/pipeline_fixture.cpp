#include "tests/actors/pipeline_fixture.hpp"

#include "broker/entry.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace outbox::test {

namespace {

/// Spawns an actor that sends `xs...` to `dest` as a request and records
/// the reply (or error) in the returned slot, then ends.
template <class T, class Handle, class... Ts>
std::pair<caf::actor, std::shared_ptr<reply<T>>>
ask(caf::actor_system& sys, const Handle& dest, Ts... xs) {
  auto out = std::make_shared<reply<T>>();
  auto requester = sys.spawn([=](caf::event_based_actor* self) {
    self->request(dest, caf::infinite, xs...)
        .then(
            [out](T& value) {
              out->arrived = true;
              out->value = std::move(value);
            },
            [out](caf::error& error) {
              out->arrived = true;
              out->error = std::move(error);
            });
  });
  return {requester, out};
}

} // namespace

std::uint64_t seed_where(actors::crash_point point, double probability,
                         const std::vector<wanted_rolls>& wanted) {
  auto crash = crash_at(point, probability);
  for (std::uint64_t seed = 1; seed < 100'000; ++seed) {
    crash.seed = seed;
    bool fits = true;
    for (const auto& w : wanted) {
      actors::crash_injector rolls{crash, w.actor_name};
      for (bool strike : w.strikes)
        fits = fits && rolls.strikes(point) == strike;
    }
    if (fits)
      return seed;
  }
  throw std::runtime_error("no seed gives the wanted crash rolls");
}

pipeline_fixture::pipeline_fixture()
    : pipeline_(std::make_shared<fake_pipeline>()) {
  pipeline_->broker = broker_;
}

std::string pipeline_fixture::render(const caf::error& error) {
  return error ? sys_.render(error) : "(no error)";
}

// -- writer --

actors::writer_setup pipeline_fixture::writer_config(int commit_batch,
                                                     int commit_delay_ms) {
  actors::writer_setup setup;
  setup.db = db_options_;
  setup.commit_batch = commit_batch;
  setup.commit_delay_ms = commit_delay_ms;
  setup.clock = [clock = clock_ms_] { return *clock; };
  setup.metrics = metrics_;
  return setup;
}

caf::actor pipeline_fixture::spawn_writer(actors::writer_setup setup) {
  return track(caf::actor_cast<caf::actor>(
      sys_.spawn(actors::writer, std::move(setup))));
}

std::shared_ptr<reply<actors::order_receipt>>
pipeline_fixture::place_via(const caf::actor& writer,
                            const std::string& request_id,
                            const std::string& sku, std::int64_t qty) {
  return tracked(ask<actors::order_receipt>(sys_, writer, actors::place_atom_v,
                                            request_id, sku, qty));
}

std::shared_ptr<reply<actors::event_receipt>> pipeline_fixture::append_via(
    const caf::actor& writer, const std::string& aggregate_id,
    const std::string& event_type, const std::string& payload) {
  return tracked(ask<actors::event_receipt>(sys_, writer, actors::append_atom_v,
                                            aggregate_id, event_type, payload));
}

std::shared_ptr<reply<std::vector<actors::order_outcome>>>
pipeline_fixture::place_batch_via(const caf::actor& writer,
                                  std::vector<actors::order_ticket> tickets) {
  return tracked(ask<std::vector<actors::order_outcome>>(
      sys_, writer, actors::place_batch_atom_v, std::move(tickets)));
}

std::shared_ptr<reply<std::vector<actors::event_outcome>>>
pipeline_fixture::append_batch_via(const caf::actor& writer,
                                   std::vector<actors::event_ticket> tickets) {
  return tracked(ask<std::vector<actors::event_outcome>>(
      sys_, writer, actors::append_batch_atom_v, std::move(tickets)));
}

std::pair<actors::relay_actor, std::shared_ptr<int>>
pipeline_fixture::spawn_nudge_counter() {
  auto count = std::make_shared<int>(0);
  auto counter = sys_.spawn([count]() -> actors::relay_actor::behavior_type {
    return {[](actors::claim_atom, std::uint64_t) {},
            [count](actors::nudge_atom) { ++*count; },
            [](actors::resume_atom) {}};
  });
  track(caf::actor_cast<caf::actor>(counter));
  return {counter, count};
}

std::pair<std::string, std::int64_t>
pipeline_fixture::order_row(std::int64_t order_id) {
  SQLite::Statement query{*db_, "SELECT sku, qty FROM orders WHERE id = ?"};
  query.bind(1, order_id);
  if (!query.executeStep())
    return {"", 0};
  return {query.getColumn(0).getString(), query.getColumn(1).getInt64()};
}

std::int64_t pipeline_fixture::count_rows(const std::string& table) {
  SQLite::Statement query{*db_, "SELECT COUNT(*) FROM " + table};
  query.executeStep();
  return query.getColumn(0).getInt64();
}

// -- consumer --

actors::consumer_setup
pipeline_fixture::consumer_config(const std::string& name,
                                  std::vector<std::string> queues,
                                  config::crash_settings crash) {
  actors::consumer_setup setup;
  setup.name = name;
  setup.names.queue = broker_->queue;
  setup.queues = queues.empty() ? std::vector<std::string>{broker_->queue}
                                : std::move(queues);
  setup.block_ms = 50;
  setup.crash = crash;
  setup.make_port = fake_consume_port_factory(broker_);
  setup.clock = [clock = clock_ms_] { return *clock; };
  setup.metrics = metrics_;
  return setup;
}

caf::actor pipeline_fixture::spawn_consumer(actors::consumer_setup setup) {
  return track(caf::actor_cast<caf::actor>(
      sys_.spawn(actors::consumer, std::move(setup))));
}

std::string pipeline_fixture::event_id_of(const std::string& aggregate_id,
                                          std::int64_t seq) {
  return aggregate_id + "#" + std::to_string(seq);
}

void pipeline_fixture::enqueue(const std::string& queue,
                               const std::string& aggregate_id,
                               std::int64_t seq, const std::string& sku,
                               std::int64_t qty) {
  broker::event_entry entry;
  entry.event_id = event_id_of(aggregate_id, seq);
  entry.aggregate_id = aggregate_id;
  entry.seq = seq;
  entry.event_type = seq == 1 ? "OrderPlaced" : "OrderPaid";
  entry.payload =
      seq == 1 ? nlohmann::json{{"sku", sku}, {"qty", qty}}.dump() : "{}";
  entry.committed_at = now();
  entry.published_at = now();
  broker_->lists[queue].push_back(broker::encode(entry));
}

// -- coordinator --

config::settings pipeline_fixture::pipeline_settings() {
  config::settings s;
  s.db = db_options_;
  s.lease = policy_;
  s.broker.queue = broker_->queue;
  s.broker.partitions = 1;
  s.run.relays = 1;
  s.run.consumers = 0;
  s.run.orders = 0;
  s.run.poll_interval_ms = 10;
  s.run.idle_poll_max_ms = 100;
  s.run.consumer_block_ms = 50;
  return s;
}

actors::coordinator_setup
pipeline_fixture::coordinator_config(config::settings settings,
                                     bool until_drained) {
  pipeline_->names = settings.broker;
  actors::coordinator_setup setup;
  setup.settings = std::move(settings);
  setup.until_drained = until_drained;
  setup.detached = false;
  setup.name_prefix = prefix_;
  setup.make_publisher = fake_publisher_factory(broker_);
  setup.make_consume_port = [make = fake_consume_port_factory(broker_)](
                                const std::string&) { return make(); };
  setup.make_probe = fake_probe_factory(pipeline_);
  setup.clock = [clock = clock_ms_] { return *clock; };
  setup.metrics = metrics_;
  setup.check_interval_ms = 20;
  return setup;
}

actors::coordinator_handle
pipeline_fixture::spawn_coordinator(actors::coordinator_setup s) {
  auto coordinator = sys_.spawn(actors::coordinator, std::move(s));
  track(caf::actor_cast<caf::actor>(coordinator));
  return coordinator;
}

actors::coordinator_state& pipeline_fixture::coordinator_of(
    const actors::coordinator_handle& coordinator) {
  auto* self = caf::actor_cast<caf::abstract_actor*>(coordinator);
  auto* typed = dynamic_cast<actors::coordinator_actor*>(self);
  if (typed == nullptr)
    throw std::logic_error("not a coordinator");
  return typed->state;
}

caf::actor
pipeline_fixture::worker_of(const actors::coordinator_handle& coordinator,
                            const actors::worker_slot& slot) {
  auto& st = coordinator_of(coordinator);
  return st.workers.at(static_cast<std::size_t>(&slot - st.slots.data()));
}

std::shared_ptr<exit_record>
pipeline_fixture::watch(const actors::coordinator_handle& coordinator) {
  return watch(caf::actor_cast<caf::actor>(coordinator));
}

std::shared_ptr<reply<std::string>> pipeline_fixture::request_report(
    const actors::coordinator_handle& coordinator) {
  return tracked(ask<std::string>(sys_, coordinator, actors::run_atom_v));
}

pipeline_fixture::started_run
pipeline_fixture::start_run(actors::coordinator_setup setup) {
  auto coordinator = spawn_coordinator(std::move(setup));
  auto report = request_report(coordinator);
  run();
  return {coordinator, report};
}

nlohmann::json pipeline_fixture::report_json(const reply<std::string>& report) {
  if (!report.value)
    throw std::runtime_error("no report: " + (report.arrived
                                                  ? render(report.error)
                                                  : "the run has not ended"));
  return nlohmann::json::parse(*report.value);
}

testing::AssertionResult
pipeline_fixture::failed_with(const reply<std::string>& report,
                              const std::string& text) {
  nlohmann::json r;
  try {
    r = report_json(report);
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << e.what();
  }
  if (r["ok"].get<bool>())
    return testing::AssertionFailure() << "the run was ok: " << r.dump();
  auto violations = r["violations"].dump();
  if (violations.find(text) == std::string::npos)
    return testing::AssertionFailure()
           << "no violation mentions \"" << text << "\": " << violations;
  return testing::AssertionSuccess();
}

void pipeline_fixture::request_shutdown(
    const actors::coordinator_handle& coordinator) {
  caf::anon_send(coordinator, actors::shutdown_atom_v);
}

metrics::pipeline_snapshot pipeline_fixture::snapshot_from_stores() {
  metrics::pipeline_snapshot s;
  s.orders = count_rows("orders");
  s.outbox_rows = count_rows("outbox");
  s.pending =
      count_status(storage::row_status_text(storage::row_status::pending));
  s.sending =
      count_status(storage::row_status_text(storage::row_status::sending));
  s.published =
      count_status(storage::row_status_text(storage::row_status::published));
  s.failed =
      count_status(storage::row_status_text(storage::row_status::failed));
  for (const auto& [name, entries] : broker_->lists) {
    auto size = static_cast<std::int64_t>(entries.size());
    (pipeline_->names.queue_of(name) ? s.in_processing : s.queued) += size;
  }
  s.processed = static_cast<std::int64_t>(broker_->processed.size());
  s.duplicates = broker_->duplicates;
  s.dead_lettered = broker_->dead_lettered;
  s.order_violations = broker_->order_violations;
  return s;
}

} // namespace outbox::test
