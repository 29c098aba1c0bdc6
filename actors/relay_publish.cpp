#include "actors/relay_publish.hpp"

#include "actors/outage.hpp"
#include "actors/relay_log.hpp"
#include "actors/relay_refusal.hpp"
#include "actors/relay_settle.hpp"
#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace outbox::actors {

namespace {

/// True when the lease of the batch ran out by the relay's own monotonic
/// clock (a process frozen by SIGSTOP, a host suspended, between claim and
/// push): then it is not pushed, whatever the wall clock says, since
/// another relay may hold the rows now. The rows are released (fenced: a
/// no-op where another took them over) and the drop is counted.
bool lease_ran_out(relay_context& relay, const storage::claim& claimed) {
  auto held_ms = relay.setup.monotonic() - relay.claimed_monotonic;
  if (!relay.setup.lease.ran_out(held_ms))
    return false;
  auto& metrics = *relay.setup.metrics;
  metrics.expired_leases_dropped +=
      static_cast<std::int64_t>(claimed.events.size());
  spdlog::info("relay {}: lease ran out {} ms after the claim, by this "
               "relay's own clock, before publishing: not pushing {} rows "
               "(events: {})",
               relay.setup.name, held_ms, claimed.events.size(),
               describe_rows(claimed.events));
  // Handing them back refunds the claim's attempt; a database that does
  // not answer gets them at the next cycle (store_error: back off).
  settle(relay, unsettled_batch{{}, 0, claimed.leases()});
  return true;
}

/// Renews the batch's leases when their renewal is due. False when every
/// lease was taken over meanwhile: the batch is dropped then.
bool lease_still_held(relay_context& relay, const storage::claim& claimed,
                      storage::millis now) {
  // Timed by this relay's monotonic clock since the claim, not by
  // lease_until: on PostgreSQL that comes from the database's clock, and a
  // skew between the hosts would move the renewal.
  auto held_ms = relay.setup.monotonic() - relay.claimed_monotonic;
  if (!relay.setup.lease.renewal_due(held_ms))
    return true;
  int held = 0;
  try {
    held = relay.store->renew(relay.setup.name, claimed.leases(),
                              relay.setup.lease.lease_until(now));
  } catch (const storage::store_error&) {
    // Not published: hand the rows back once the database answers.
    relay.unsettled = unsettled_batch{{}, 0, claimed.leases()};
    throw;
  }
  if (held > 0)
    return true;
  // Every lease was taken over while we were away (a stopped process): the
  // fence refused the renewal, so stop touching these rows.
  relay.setup.metrics->fenced_acks_rejected +=
      static_cast<std::int64_t>(claimed.events.size());
  spdlog::info("relay {}: lease lost on {} rows before publishing "
               "(taken over), dropping the batch (events: {})",
               relay.setup.name, claimed.events.size(),
               describe_rows(claimed.events));
  return false;
}

/// Redis did not take the batch and it is not the rows' fault: hand them
/// back without spending an attempt, and back off. Redis may have taken
/// the batch anyway; the inbox absorbs that.
relay_next release_for_redis(relay_context& relay, const storage::claim& c,
                             const broker::broker_error& e) {
  auto& metrics = *relay.setup.metrics;
  metrics.publish_errors++;
  note_outage(metrics.outage_retries, e);
  // Once per outage: every idle poll retries while Redis is down (or
  // refuses the command: isolate_refused noted it for the coordinator).
  auto level = relay.redis.failure_level(relay.setup.clock());
  spdlog::log(level,
              "relay {}: Redis {}, releasing {} rows and retrying "
              "(events: {}): {}",
              relay.setup.name,
              is_outage(e) ? "unavailable" : "refuses the command",
              c.events.size(), describe_rows(c.events), e.what());
  settle(relay, unsettled_batch{{}, 0, c.leases()});
  return idle_backoff(relay);
}

} // namespace

std::optional<relay_next> publish_and_ack(relay_context& relay,
                                          const storage::claim& claimed,
                                          bool zombie) {
  auto& metrics = *relay.setup.metrics;
  if (!zombie && lease_ran_out(relay, claimed))
    return relay_next::claim_now();
  auto now = relay.setup.clock();
  // A lease running out is renewed before the broker call; a zombie does
  // not know it slept, which is exactly what the fence must catch.
  if (!zombie && !lease_still_held(relay, claimed, now))
    return relay_next::claim_now();
  storage::claim c = claimed;
  try {
    try {
      relay.publisher->publish(to_entries(c, now));
    } catch (const broker::broker_error& e) {
      if (e.code() == broker::broker_errc::unavailable)
        throw;
      // Counted once it is known to be a refusal: isolate_refused may find
      // an outage instead, which the handler below counts.
      c = isolate_refused(relay, c, now, e);
      metrics.publish_errors++;
    }
  } catch (const broker::broker_error& e) {
    return release_for_redis(relay, c, e);
  }
  redis_answered(relay);
  server_states_cleared();
  metrics.enqueued += static_cast<std::int64_t>(c.events.size());
  if (relay.crashes->strikes(crash_point::relay_after_publish))
    return relay_crash(relay, "after publish, before ack");
  settle(relay, unsettled_batch{std::move(c), relay.setup.clock(), {}});
  return std::nullopt;
}

} // namespace outbox::actors
