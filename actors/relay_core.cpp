#include "actors/relay_core.hpp"

#include "actors/log_lines.hpp"
#include "actors/outage.hpp"
#include "actors/relay_log.hpp"
#include "actors/relay_publish.hpp"
#include "actors/relay_settle.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <ctime>
#include <map>
#include <utility>
#include <vector>

namespace outbox::actors {

namespace {

/// CLOCK_BOOTTIME in ms: never jumps with the wall clock, and counts the
/// time a suspended host slept.
storage::millis boot_time_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_BOOTTIME, &t);
  return static_cast<storage::millis>(t.tv_sec) * 1000 + t.tv_nsec / 1'000'000;
}

} // namespace

relay_core::relay_core(relay_setup setup) {
  relay_.setup = std::move(setup);
  if (!relay_.setup.monotonic)
    relay_.setup.monotonic = boot_time_ms;
  relay_.crashes =
      std::make_unique<crash_injector>(relay_.setup.crash, relay_.setup.name);
}

relay_core::~relay_core() = default;

relay_start relay_core::start() {
  try {
    relay_.db = storage::connect(relay_.setup.db, storage::open_mode::as_is);
    relay_.store = relay_.db->leases();
    relay_.publisher = relay_.setup.make_publisher();
  } catch (const std::exception& e) {
    spdlog::error("relay {}: cannot start: {}", relay_.setup.name, e.what());
    return {false, e.what()};
  }
  return {};
}

relay_next relay_core::cycle() {
  relay_next next;
  try {
    next = run_cycle();
  } catch (const storage::store_error& e) {
    note_outage(relay_.setup.metrics->outage_retries, e);
    database_failed(relay_, "", e.what());
    return idle_backoff(relay_);
  }
  database_answered(relay_);
  return next;
}

std::optional<relay_next> relay_core::resume() {
  if (!relay_.paused)
    return std::nullopt;
  // Counted as paused until its publish is done: a bounded run must not
  // end before it lands.
  auto held = std::move(*relay_.paused);
  relay_.paused.reset();
  const auto& c = held.claimed;
  spdlog::info("relay {}: resumed after the injected pause, publishing {} "
               "rows whose lease may be another relay's by now (the fence "
               "decides)",
               relay_.setup.name, c.events.size());
  relay_next next;
  try {
    next = publish_and_ack(relay_, c, true).value_or(relay_next::claim_now());
  } catch (const storage::store_error& e) {
    database_failed(relay_, " after pause", e.what());
    return idle_backoff(relay_);
  }
  database_answered(relay_);
  return next;
}

void relay_core::shutdown() {
  if (relay_.paused) {
    const auto& claimed = relay_.paused->claimed;
    try {
      relay_.setup.metrics->released +=
          relay_.store->release(relay_.setup.name, claimed.leases());
    } catch (const std::exception& e) {
      spdlog::warn("relay {}: releasing {} paused rows on shutdown failed, "
                   "they wait for their lease to expire (events: {}): {}",
                   relay_.setup.name, claimed.events.size(),
                   describe_rows(claimed.events), e.what());
    }
    relay_.paused.reset();
  }
  if (!relay_.unsettled)
    return;
  try {
    settle(relay_);
  } catch (const std::exception& e) {
    const auto& left = *relay_.unsettled;
    spdlog::warn("relay {}: settling {} rows on shutdown failed: they wait "
                 "for their leases to run out (events: {}): {}",
                 relay_.setup.name,
                 left.published.events.size() + left.unpublished.size(),
                 describe_rows(left.published.events), e.what());
  }
}

relay_next relay_core::run_cycle() {
  settle_left_over(relay_);
  relay_.claimed_monotonic = relay_.setup.monotonic();
  auto c = relay_.store->claim_batch(relay_.setup.name, relay_.setup.clock(),
                                     relay_.setup.lease);
  count_claim(c);
  if (c.events.empty()) {
    // The walk stopped at its bound: rows further on may be claimable. Not
    // at once: when everything is blocked that would spin on the write lock.
    if (c.more_candidates)
      return relay_next::claim_after(relay_.setup.poll_interval_ms);
    return idle_backoff(relay_);
  }
  relay_.idle_delay_ms = 0;
  if (relay_.crashes->strikes(crash_point::relay_after_claim))
    return relay_crash(relay_, "after claim");
  if (relay_.crashes->strikes(crash_point::relay_pause))
    return pause(std::move(c));
  if (auto stopped_short = publish_and_ack(relay_, c, false))
    return *stopped_short;
  auto full = static_cast<int>(c.events.size()) >= relay_.setup.lease.batch;
  if (full || c.more_candidates)
    return relay_next::claim_now();
  return relay_next::claim_after(relay_.setup.poll_interval_ms);
}

/// Counts a claim, and says which rows it took over from whom and which
/// it gave up on (FAILED).
void relay_core::count_claim(const storage::claim& c) {
  auto& metrics = *relay_.setup.metrics;
  metrics.claims++;
  metrics.claimed_rows += static_cast<std::int64_t>(c.events.size());
  metrics.lease_takeovers += c.taken_over;
  metrics.rows_failed += c.failed;
  if (c.taken_over > 0) {
    std::vector<storage::claimed_event> taken;
    std::map<std::string, int> previous_owners;
    for (const auto& e : c.events)
      if (e.taken_over) {
        taken.push_back(e);
        previous_owners[e.previous_owner]++;
      }
    spdlog::info("relay {}: took over {} rows of expired leases (from: {}; "
                 "events: {})",
                 relay_.setup.name, c.taken_over,
                 bounded_list(previous_owners,
                              [](const auto& owner) {
                                return owner.first + " (" +
                                       std::to_string(owner.second) + ")";
                              }),
                 describe_rows(taken));
  }
  for (const auto& row : c.given_up)
    log_failed(relay_.setup.name, row);
}

/// Freezes past the lease without blocking the thread, holding the batch:
/// only the resume is acted on until then (claims are stale, nudges
/// ignored).
relay_next relay_core::pause(storage::claim claimed) {
  auto& metrics = *relay_.setup.metrics;
  metrics.zombie_pauses++;
  auto pause_ms = relay_.setup.lease.past_lease_pause();
  spdlog::info("relay {}: injected pause (crash.relay_pause): frozen for {} "
               "ms, past its {} ms lease, holding {} rows (events: {})",
               relay_.setup.name, pause_ms, relay_.setup.lease.ttl,
               claimed.events.size(), describe_rows(claimed.events));
  relay_.paused.emplace(paused_batch{
      std::move(claimed), outbox::metrics::gauge_hold{metrics.paused_batches}});
  return {relay_next::what::pause, pause_ms};
}

} // namespace outbox::actors
