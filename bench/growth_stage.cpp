// Growth: what one claim costs as history piles up, and with many pending
// rows spread over many or few aggregates.

#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "storage/database.hpp"
#include "storage/outbox_store.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

/// Mean microseconds of claim_batch over `claims` claims; each claim is
/// acknowledged (untimed) so the next one finds fresh rows.
double claim_cost(const config::settings& s, int claims) {
  auto db = storage::open_database(s.db);
  storage::outbox_store store{*db};
  double total = 0;
  int timed = 0;
  for (int i = 0; i < claims; ++i) {
    auto now = storage::wall_clock_now();
    auto start = clock::now();
    auto claim = store.claim_batch("bench-growth", now, s.lease);
    total += seconds_since(start);
    ++timed;
    if (claim.events.empty())
      break;
    store.ack("bench-growth", claim.leases(), now);
  }
  return 1e6 * total / timed;
}

/// One claim by a second relay while a first holds the heads of every
/// aggregate: it must give up in bounded time, not walk all pending rows.
double blocked_claim_cost(const config::settings& s, int claims) {
  auto db = storage::open_database(s.db);
  storage::outbox_store store{*db};
  auto now = storage::wall_clock_now();
  store.claim_batch("bench-holder", now, s.lease);
  auto start = clock::now();
  for (int i = 0; i < claims; ++i)
    store.claim_batch("bench-other", now, s.lease);
  return 1e6 * seconds_since(start) / claims;
}

} // namespace

void measure_growth(stage_context& ctx) {
  const auto& scale = ctx.scale;
  auto live = static_cast<std::int64_t>(ctx.space.base().lease.batch) *
              (scale.timed_claims + 1);
  auto sync = ctx.space.base().db.synchronous;
  auto label = [](std::int64_t n) {
    return n >= 1'000'000 ? std::to_string(n / 1'000'000) + "M"
                          : std::to_string(n / 1000) + "k";
  };

  ctx.progress("growth: claim cost with " + label(scale.history_small) +
               " published rows");
  auto s = ctx.space.fresh("growth", sync);
  fill_outbox(s.db, scale.history_small, scale.history_small / 2, "PUBLISHED",
              "old");
  fill_outbox(s.db, live, live / 2, "PENDING", "live1");
  ctx.out.add({"growth", "claim_history_small",
               "one claim, " + label(scale.history_small) +
                   " PUBLISHED rows in the table",
               claim_cost(s, scale.timed_claims), "us", ""});

  ctx.progress("growth: claim cost with " + label(scale.history_large) +
               " published rows");
  fill_outbox(s.db, scale.history_large - scale.history_small,
              (scale.history_large - scale.history_small) / 2, "PUBLISHED",
              "older");
  fill_outbox(s.db, live, live / 2, "PENDING", "live2");
  ctx.out.add({"growth", "claim_history_large",
               "one claim, " + label(scale.history_large) +
                   " PUBLISHED rows in the table",
               claim_cost(s, scale.timed_claims), "us", ""});

  auto pending = scale.spread_pending;
  ctx.progress("growth: claim cost over many and few aggregates");
  s = ctx.space.fresh("growth-spread", sync);
  fill_outbox(s.db, pending, pending, "PENDING", "many");
  ctx.out.add(
      {"growth", "claim_many_aggregates",
       "one claim, " + label(pending) + " PENDING rows, one per aggregate",
       claim_cost(s, scale.timed_claims), "us", ""});
  s = ctx.space.fresh("growth-spread", sync);
  fill_outbox(s.db, pending, 10, "PENDING", "few");
  ctx.out.add({"growth", "claim_few_aggregates",
               "one claim, " + label(pending) + " PENDING rows, 10 aggregates",
               claim_cost(s, scale.timed_claims), "us", ""});
  s = ctx.space.fresh("growth-spread", sync);
  fill_outbox(s.db, pending, 10, "PENDING", "held");
  ctx.out.add({"growth", "claim_heads_held",
               "one claim, " + label(pending) +
                   " PENDING rows, 10 aggregates, heads leased elsewhere",
               blocked_claim_cost(s, scale.timed_claims), "us", ""});
}

} // namespace outbox::bench
