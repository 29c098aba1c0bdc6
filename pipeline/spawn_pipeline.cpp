#include "pipeline/spawn_pipeline.hpp"

#include "actors/coordinator.hpp"
#include "actors/messages.hpp"
#include "actors/system_config.hpp"
#include "adapters/pipeline_probe.hpp"
#include "adapters/redis_ports.hpp"
#include "broker/fence.hpp"
#include "storage/types.hpp"

#include <caf/all.hpp>

#include <utility>

namespace outbox::pipeline {

void configure_system(caf::actor_system_config& cfg) {
  actors::register_outbox_types(cfg);
  actors::tune_scheduler(cfg);
}

actors::coordinator_handle spawn_pipeline(caf::actor_system& system,
                                          const config::settings& s,
                                          pipeline_hooks hooks) {
  actors::coordinator_setup setup;
  setup.settings = s;
  setup.until_drained = hooks.until_drained;
  setup.role = std::move(hooks.role);
  setup.name_prefix = std::move(hooks.name_prefix);
  setup.consumer_lock_holder = std::move(hooks.consumer_lock_holder);
  setup.make_publisher = [s] {
    return adapters::make_redis_publish_port(s.redis, s.broker);
  };
  // A token of "" (no lock holder) is a fence that checks nothing.
  setup.make_consume_port =
      [s, inbox = std::move(hooks.inbox),
       sink = std::move(hooks.sink)](const std::string& token) {
        return adapters::make_redis_consume_port(
            s.redis, s.broker, broker::fence{s.broker.consumer_lock(), token},
            inbox, sink);
      };
  setup.make_probe = [s] { return adapters::make_pipeline_probe(s); };
  setup.clock = storage::wall_clock_now;
  setup.metrics = hooks.metrics ? std::move(hooks.metrics)
                                : std::make_shared<metrics::run_metrics>();
  setup.progress = std::move(hooks.progress);
  setup.progress_interval_ms = hooks.progress_interval_ms;
  return system.spawn<caf::detached>(actors::coordinator, std::move(setup));
}

pipeline_outcome await_report(caf::actor_system& system,
                              const actors::coordinator_handle& coordinator,
                              std::chrono::milliseconds timeout) {
  pipeline_outcome outcome;
  caf::scoped_actor self{system};
  auto deliver = [&](auto&& handle) {
    handle.receive(
        [&](const std::string& r) { outcome.report = r; },
        [&](caf::error& err) { outcome.error = system.render(err); });
  };
  if (timeout.count() > 0)
    deliver(self->request(coordinator, timeout, actors::run_atom_v));
  else
    deliver(self->request(coordinator, caf::infinite, actors::run_atom_v));
  if (outcome.report.empty()) // timed out or failed: its children go with it
    self->send_exit(coordinator, caf::exit_reason::user_shutdown);
  self->wait_for(coordinator);
  return outcome;
}

} // namespace outbox::pipeline
