#include "actors/crash_injector.hpp"

#include "broker/keys.hpp"

namespace outbox::actors {

crash_injector::crash_injector(const config::crash_settings& settings,
                               const std::string& actor_name)
    : settings_(settings),
      random_(settings.seed ^ broker::fnv1a_64(actor_name)) {}

bool crash_injector::strikes(crash_point point) {
  auto p = probability(point);
  if (p <= 0)
    return false;
  return std::uniform_real_distribution<double>{0.0, 1.0}(random_) < p;
}

double crash_injector::probability(crash_point point) const {
  switch (point) {
  case crash_point::relay_after_claim:
    return settings_.relay_after_claim;
  case crash_point::relay_after_publish:
    return settings_.relay_after_publish;
  case crash_point::relay_pause:
    return settings_.relay_pause;
  case crash_point::consumer_after_pop:
    return settings_.consumer_after_pop;
  case crash_point::consumer_after_effect:
    return settings_.consumer_after_effect;
  case crash_point::consumer_after_sink_commit:
    return settings_.consumer_after_sink_commit;
  }
  return 0;
}

} // namespace outbox::actors
