#include "actors/relay_settle.hpp"

#include "actors/relay_log.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

namespace outbox::actors {

settled settle(relay_context& relay) {
  settled done;
  if (!relay.unsettled)
    return done;
  auto& u = *relay.unsettled;
  auto& metrics = *relay.setup.metrics;
  try {
    if (!u.unpublished.empty()) {
      done.released = relay.store->release(relay.setup.name, u.unpublished);
      metrics.released += done.released;
      u.unpublished.clear();
    }
    if (!u.published.events.empty()) {
      const auto& c = u.published;
      auto acked =
          relay.store->ack(relay.setup.name, c.leases(), u.published_at);
      // Latencies before the counter: a scrape that sees the rows acked
      // sees their latencies too.
      if (acked.rejected.empty()) {
        std::vector<double> latencies;
        latencies.reserve(c.events.size());
        for (const auto& e : c.events)
          latencies.push_back(
              static_cast<double>(u.published_at - e.created_at));
        metrics.commit_to_published.record_many(latencies);
      }
      metrics.acked += acked.acked;
      done.acked = acked.acked;
      done.rejected = static_cast<int>(acked.rejected.size());
      if (!acked.rejected.empty()) {
        metrics.fenced_acks_rejected += done.rejected;
        spdlog::info(u.retried
                         ? "relay {}: the fence refused the ack of {} rows: "
                           "taken over during the outage, or acked already by "
                           "the attempt whose answer was lost (events: {})"
                         : "relay {}: lease lost on {} rows (taken over), ack "
                           "rejected (events: {})",
                     relay.setup.name, acked.rejected.size(),
                     describe_rows(rows_named(c, acked.rejected)));
      }
      spdlog::debug("relay {}: published {} rows, acked {}", relay.setup.name,
                    c.events.size(), acked.acked);
    }
  } catch (const storage::store_error&) {
    u.retried = true;
    throw;
  }
  relay.unsettled.reset();
  return done;
}

settled settle(relay_context& relay, unsettled_batch batch) {
  relay.unsettled = std::move(batch);
  return settle(relay);
}

void settle_left_over(relay_context& relay) {
  if (!relay.unsettled)
    return;
  auto done = settle(relay);
  spdlog::info("relay {}: the database answers again: of the rows it could "
               "not settle during the outage, {} acked, {} handed back, {} "
               "refused by the fence",
               relay.setup.name, done.acked, done.released, done.rejected);
}

} // namespace outbox::actors
