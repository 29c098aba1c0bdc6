// Trim: `outbox trim`'s walk (audit::trim_delivered) over the dedup records
// of delivered events, every one of them old enough to go.

#include "audit/dedup_trim.hpp"
#include "audit/pipeline_audit.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "bench/trim_check.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "broker/inbox.hpp"
#include "broker/publisher.hpp"
#include "broker/server_time.hpp"
#include "storage/clock.hpp"
#include "storage/database.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::bench {

namespace {

/// How long ago the fixture's rows were published: well past any cutoff a
/// daily trim uses.
constexpr std::int64_t trim_row_age_ms = 8LL * 24 * 60 * 60 * 1000;

/// A consumer backlog beside the records: one entry of a delivered event
/// waiting in the queues per this many records. Trim reads every list once
/// per gathered batch of candidates, so what waits there is part of its
/// cost.
constexpr std::int64_t records_per_waiting_entry = 5;

/// Calls `each` with consecutive slices of `all`, `size` elements at most.
template <class T, class Each>
void by_slices(const std::vector<T>& all, std::size_t size, Each each) {
  for (std::size_t i = 0; i < all.size(); i += size) {
    auto end = std::min(i + size, all.size());
    each(std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(i),
                        all.begin() + static_cast<std::ptrdiff_t>(end)));
  }
}

/// Pushes the rows tagged `tag` to the queues, as the relays would have.
void queue_filled(const config::settings& s, const std::string& tag) {
  broker::connection conn{s.redis};
  broker::publisher publisher{conn, s.broker};
  by_slices(filled_entries(s.db, tag), 1000,
            [&](const std::vector<broker::event_entry>& entries) {
              publisher.publish(entries);
            });
}

/// Applies every row tagged `tag` through the consumers' inbox, as a
/// consumer would have: dedup records, applied seqs and reservations that
/// `outbox verify` accounts for.
void apply_filled(const config::settings& s, const std::string& tag) {
  std::vector<std::string> encoded;
  for (const auto& e : filled_entries(s.db, tag))
    encoded.push_back(broker::encode(e));
  broker::connection conn{s.redis};
  broker::inbox inbox{conn, s.broker};
  by_slices(encoded, 256, [&](const std::vector<std::string>& entries) {
    inbox.apply_batch(entries);
  });
}

/// Throws unless the trim forgot every record and the stores still pass
/// `outbox verify`'s checks: a trim that is fast because it is wrong fails
/// the stage.
void check_trimmed(const config::settings& s, storage::database& db,
                   broker::connection& redis, const broker::trim_totals& t,
                   std::int64_t records) {
  auto left = broker::read_stats(redis, s.broker).processed;
  if (auto wrong = trim_shortfall(t, records, left); !wrong.empty())
    throw std::runtime_error(wrong);
  auto verdict = audit::audit_pipeline(db, redis, s.broker);
  if (!verdict.ok())
    throw std::runtime_error("the audit after the trim failed: " +
                             verdict.to_text());
}

} // namespace

void measure_trim(stage_context& ctx) {
  auto records = ctx.scale.trim_records;
  auto batch = static_cast<std::size_t>(audit::default_trim_batch);
  auto waiting = records / records_per_waiting_entry;
  ctx.progress("trim: " + std::to_string(records) +
               " dedup records of delivered events, " +
               std::to_string(waiting) + " entries waiting in the queues");
  auto s = ctx.space.fresh("trim", ctx.space.base().db.synchronous);
  // One OrderPlaced per order, as the writer makes them.
  fill_outbox(s.db, records, records, storage::row_status::published, "trim",
              storage::wall_clock_now() - trim_row_age_ms);
  apply_filled(s, "trim");
  fill_outbox(s.db, waiting, waiting, storage::row_status::published, "trimq");
  queue_filled(s, "trimq");

  auto db = storage::connect(s.db, storage::open_mode::as_is);
  broker::connection redis{s.redis};
  // Every record was applied before this: all of them are old enough.
  auto cutoff = broker::server_time_ms(redis) + 1;
  cpu_meter cpu{s};
  broker::trim_totals totals;
  auto start = std::chrono::steady_clock::now();
  audit::trim_delivered(*db, redis, s.broker, cutoff, batch, totals);
  auto seconds = seconds_since(start);
  auto own = cpu.own_seconds();
  auto in_redis = cpu.redis_seconds();
  auto in_database = cpu.database_seconds();
  check_trimmed(s, *db, redis, totals, records);

  auto per_record = [&](double cpu_seconds) {
    return 1e6 * cpu_seconds / static_cast<double>(records);
  };
  ctx.out.add({"trim", "trim_records",
               "outbox trim, --batch " + std::to_string(batch) + ", " +
                   std::to_string(waiting) + " entries queued",
               static_cast<double>(records) / seconds, "records/s", ""});
  ctx.out.add({"trim", "trim_cpu", "CPU per record trimmed, in outbox",
               per_record(own), "us", ""});
  ctx.out.add({"trim", "trim_redis_cpu", "CPU per record trimmed, in Redis",
               per_record(in_redis), "us", ""});
  if (ctx.space.postgres())
    ctx.out.add({"trim", "trim_postgres_cpu",
                 "CPU per record trimmed, in the PostgreSQL server",
                 per_record(in_database), "us", ""});
  ctx.space.clear_redis();
}

} // namespace outbox::bench
