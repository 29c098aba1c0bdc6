#include "actors/relay_next.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace outbox::actors {

relay_next idle_backoff(relay_context& relay) {
  relay.idle_delay_ms =
      relay.idle_delay_ms == 0
          ? relay.setup.poll_interval_ms
          : std::min(relay.idle_delay_ms * 2, relay.setup.idle_poll_max_ms);
  return relay_next::claim_after(relay.idle_delay_ms);
}

relay_next relay_crash(relay_context& relay, const char* point) {
  relay.setup.metrics->injected_crashes++;
  spdlog::info("relay {}: injected crash ({})", relay.setup.name, point);
  return {relay_next::what::stop, 0, ec::injected_crash};
}

} // namespace outbox::actors
