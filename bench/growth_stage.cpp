// Growth: what one claim costs as history piles up, and with many pending
// rows spread over many or few aggregates.

#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "storage/database.hpp"
#include "storage/lease_store.hpp"
#include "storage/types.hpp"

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

/// Mean microseconds of claim_batch over `claims` claims; each claim is
/// acknowledged (untimed) so the next one finds fresh rows.
double claim_cost(const config::settings& s, int claims) {
  auto db = storage::connect(s.db, storage::open_mode::as_is);
  auto store = db->leases();
  double total = 0;
  int timed = 0;
  for (int i = 0; i < claims; ++i) {
    auto now = storage::wall_clock_now();
    auto start = clock::now();
    auto claim = store->claim_batch("bench-growth", now, s.lease);
    total += seconds_since(start);
    ++timed;
    if (claim.events.empty())
      break;
    store->ack("bench-growth", claim.leases(), now);
  }
  return 1e6 * total / timed;
}

/// Leases every claimable head of `s` to another relay, as one that
/// stopped answering would hold them. (One claim does on SQLite; on
/// PostgreSQL a claim takes a run of one aggregate's rows, so it takes one
/// claim per aggregate.)
void hold_every_head(storage::lease_store& store, const config::settings& s) {
  auto now = storage::wall_clock_now();
  for (int i = 0; i < 1000; ++i)
    if (store.claim_batch("bench-holder", now, s.lease).events.empty())
      break;
}

/// One claim by a second relay while a first holds the heads of every
/// aggregate: it must give up in bounded time, not walk all pending rows.
double blocked_claim_cost(const config::settings& s, int claims) {
  auto db = storage::connect(s.db, storage::open_mode::as_is);
  auto store = db->leases();
  hold_every_head(*store, s);
  auto now = storage::wall_clock_now();
  auto start = clock::now();
  for (int i = 0; i < claims; ++i)
    store->claim_batch("bench-other", now, s.lease);
  return 1e6 * seconds_since(start) / claims;
}

/// "500k", "2M": how a row count reads in a figure's description.
std::string label(std::int64_t n) {
  return n >= 1'000'000 ? std::to_string(n / 1'000'000) + "M"
                        : std::to_string(n / 1000) + "k";
}

/// Grows the PUBLISHED history of `s` from `from` to `to` rows, adds `live`
/// fresh PENDING rows to claim, and records the claim cost as `id`.
void measure_history(stage_context& ctx, const config::settings& s,
                     std::int64_t from, std::int64_t to, std::int64_t live,
                     const std::string& old_tag, const std::string& live_tag,
                     const std::string& id) {
  fill_outbox(s.db, to - from, (to - from) / 2, storage::row_status::published,
              old_tag);
  fill_outbox(s.db, live, live / 2, storage::row_status::pending, live_tag);
  ctx.out.add({"growth", id,
               "one claim, " + label(to) + " PUBLISHED rows in the table",
               claim_cost(s, ctx.scale.timed_claims), "us", ""});
}

/// On a fresh outbox of the stage's PENDING rows spread over `aggregates`
/// aggregates, records `cost` of a claim as `id`; `shape` ends the
/// description.
void measure_spread(stage_context& ctx, std::int64_t aggregates,
                    const std::string& tag, const std::string& id,
                    const std::string& shape,
                    double (*cost)(const config::settings&, int)) {
  auto pending = ctx.scale.spread_pending;
  auto s = ctx.space.fresh("growth-spread", ctx.space.base().db.synchronous);
  fill_outbox(s.db, pending, aggregates, storage::row_status::pending, tag);
  ctx.out.add({"growth", id,
               "one claim, " + label(pending) + " PENDING rows, " + shape,
               cost(s, ctx.scale.timed_claims), "us", ""});
}

/// The claim over the large history once `held` PENDING rows wait behind
/// heads another relay holds (10 aggregates): what a claim costs with both
/// kinds of rows it must not read.
void measure_history_and_held(stage_context& ctx, const config::settings& s,
                              std::int64_t held, std::int64_t live) {
  fill_outbox(s.db, held, 10, storage::row_status::pending, "behind");
  {
    auto db = storage::connect(s.db, storage::open_mode::as_is);
    hold_every_head(*db->leases(), s);
  }
  fill_outbox(s.db, live, live / 2, storage::row_status::pending, "live3");
  ctx.out.add({"growth", "claim_history_held",
               "one claim, " + label(ctx.scale.history_large) +
                   " PUBLISHED rows and " + label(held) +
                   " PENDING behind heads leased elsewhere",
               claim_cost(s, ctx.scale.timed_claims), "us", ""});
}

} // namespace

void measure_growth(stage_context& ctx) {
  const auto& scale = ctx.scale;
  auto live = static_cast<std::int64_t>(ctx.space.base().lease.batch) *
              (scale.timed_claims + 1);

  ctx.progress("growth: claim cost with " + label(scale.history_small) +
               " published rows");
  auto s = ctx.space.fresh("growth", ctx.space.base().db.synchronous);
  measure_history(ctx, s, 0, scale.history_small, live, "old", "live1",
                  "claim_history_small");
  ctx.progress("growth: claim cost with " + label(scale.history_large) +
               " published rows");
  measure_history(ctx, s, scale.history_small, scale.history_large, live,
                  "older", "live2", "claim_history_large");

  ctx.progress("growth: claim cost with " + label(scale.history_large) +
               " published rows and " + label(scale.spread_pending) +
               " behind held heads");
  measure_history_and_held(ctx, s, scale.spread_pending, live);

  ctx.progress("growth: claim cost over many and few aggregates");
  measure_spread(ctx, scale.spread_pending, "many", "claim_many_aggregates",
                 "one per aggregate", claim_cost);
  measure_spread(ctx, 10, "few", "claim_few_aggregates", "10 aggregates",
                 claim_cost);
  measure_spread(ctx, 10, "held", "claim_heads_held",
                 "10 aggregates, heads leased elsewhere", blocked_claim_cost);
}

} // namespace outbox::bench
