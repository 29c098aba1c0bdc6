// Ceilings: the raw rate of each primitive the pipeline is built from, with
// the same schema, settings and payloads, and none of the pipeline's logic.
// A stage's figure is then read as a share of its ceiling.

#include "bench/fill.hpp"
#include "bench/postgres_ceilings.hpp"
#include "bench/stages.hpp"
#include "broker/connection.hpp"
#include "broker/inbox.hpp"
#include "broker/inbox_script.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <vector>

// The ceilings measure raw SQLite (statements with none of the stores'
// logic) to show what the stores cost on top: they use SQLiteCpp directly.

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

/// Orders as the writer stores them: the request key, the order row and its
/// outbox row, in transactions of `group` orders, with none of the
/// writer's logic (no lookup of the key, no validation, no actor).
/// Returns orders per second.
double raw_order_inserts(const storage::db_options& db, std::int64_t orders,
                         int group) {
  auto conn = storage::sqlite::open_database(db);
  SQLite::Statement order{*conn, "INSERT INTO orders (sku, qty, created_at)"
                                 " VALUES (?, ?, ?)"};
  SQLite::Statement event{
      *conn, "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
             " payload, created_at, available_at) VALUES (?, ?, 1,"
             " 'OrderPlaced', ?, ?, ?)"};
  SQLite::Statement key{
      *conn, "INSERT INTO request_keys (request_id, fingerprint, order_id,"
             " event_id, created_at) VALUES (?, 'sku-1|1', ?, ?, ?)"};
  auto start = clock::now();
  for (std::int64_t done = 0; done < orders;) {
    SQLite::Transaction transaction{*conn};
    for (int i = 0; i < group && done < orders; ++i, ++done) {
      auto now = storage::wall_clock_now();
      order.bind(1, "sku-1");
      order.bind(2, 1);
      order.bind(3, now);
      order.exec();
      order.reset();
      auto order_id = conn->getLastInsertRowid();
      auto id = std::to_string(order_id);
      event.bind(1, "raw-" + id);
      event.bind(2, "order-" + id);
      event.bind(3, "{\"order_id\":" + id + ",\"sku\":\"sku-1\",\"qty\":1}");
      event.bind(4, now);
      event.bind(5, now);
      event.exec();
      event.reset();
      key.bind(1, "raw-request-" + id);
      key.bind(2, order_id);
      key.bind(3, "raw-" + id);
      key.bind(4, now);
      key.exec();
      key.reset();
    }
    transaction.commit();
  }
  return static_cast<double>(orders) / seconds_since(start);
}

/// Leases `batch` PENDING rows at a time with one UPDATE ... RETURNING, then
/// marks them PUBLISHED one by one by rowid: the relay's two transactions
/// without its head-of-line rule and fencing. Returns rows per second.
double raw_claim_ack(const storage::db_options& db, std::int64_t rows,
                     int batch) {
  auto conn = storage::sqlite::open_database(db);
  SQLite::Statement claim{
      *conn, "UPDATE outbox SET status = 'SENDING', owner = 'raw',"
             " lease_until = ?1, lease_epoch = lease_epoch + 1,"
             " attempts = attempts + 1 WHERE rowid IN (SELECT rowid FROM"
             " outbox WHERE status = 'PENDING' ORDER BY rowid LIMIT ?2)"
             " RETURNING rowid, event_id, aggregate_id, seq, payload"};
  SQLite::Statement ack{*conn,
                        "UPDATE outbox SET status = 'PUBLISHED', owner = NULL,"
                        " lease_until = 0, published_at = ?1 WHERE rowid = ?2"};
  std::int64_t moved = 0;
  std::vector<std::int64_t> rowids;
  auto start = clock::now();
  while (moved < rows) {
    rowids.clear();
    {
      SQLite::Transaction transaction{*conn,
                                      SQLite::TransactionBehavior::IMMEDIATE};
      claim.bind(1, storage::wall_clock_now() + 10'000);
      claim.bind(2, batch);
      while (claim.executeStep()) {
        rowids.push_back(claim.getColumn(0).getInt64());
        // Read the columns the relay needs, as it would.
        (void)claim.getColumn(4).getString();
      }
      claim.reset();
      transaction.commit();
    }
    if (rowids.empty())
      break;
    SQLite::Transaction transaction{*conn,
                                    SQLite::TransactionBehavior::IMMEDIATE};
    for (auto rowid : rowids) {
      ack.bind(1, storage::wall_clock_now());
      ack.bind(2, rowid);
      ack.exec();
      ack.reset();
    }
    transaction.commit();
    moved += static_cast<std::int64_t>(rowids.size());
  }
  return static_cast<double>(moved) / seconds_since(start);
}

/// RPUSHes of `batch` entries each, eight per round trip. Returns entries
/// per second.
double pipelined_rpush(const config::settings& s,
                       const std::vector<std::string>& entries, int batch) {
  broker::connection conn{s.redis};
  conn.ensure_connected();
  const auto& list = s.broker.queue;
  std::vector<std::vector<std::string>> round;
  auto start = clock::now();
  for (std::size_t i = 0; i < entries.size();) {
    round.clear();
    for (int c = 0; c < 8 && i < entries.size(); ++c) {
      std::vector<std::string> push{"RPUSH", list};
      for (int k = 0; k < batch && i < entries.size(); ++k)
        push.push_back(entries[i++]);
      round.push_back(std::move(push));
    }
    conn.pipeline(round);
  }
  auto rate = static_cast<double>(entries.size()) / seconds_since(start);
  conn.command({"DEL", list});
  return rate;
}

/// The inbox script (dedup + effect), one EVALSHA per entry, `depth` per
/// round trip, on first deliveries. Returns entries per second.
double pipelined_inbox_script(const config::settings& s,
                              const std::vector<std::string>& entries,
                              int depth) {
  broker::connection conn{s.redis};
  auto sha = broker::reply_text(
      *conn.command({"SCRIPT", "LOAD", broker::inbox::script()}));
  auto keys = broker::inbox_script_keys(s.broker);
  std::vector<std::string> call{"EVALSHA", sha, std::to_string(keys.size())};
  call.insert(call.end(), keys.begin(), keys.end());
  // No fence ('' holder): the ceiling is the script's own cost.
  call.push_back("");
  std::vector<std::vector<std::string>> round;
  auto start = clock::now();
  for (std::size_t i = 0; i < entries.size();) {
    round.clear();
    for (int c = 0; c < depth && i < entries.size(); ++c) {
      round.push_back(call);
      round.back().push_back(entries[i++]);
    }
    conn.pipeline(round);
  }
  return static_cast<double>(entries.size()) / seconds_since(start);
}

/// The inbox script as the consumer calls it: one call per batch of
/// `batch` entries, no pop or remove. Returns entries per second.
double batched_inbox(const config::settings& s,
                     const std::vector<std::string>& entries,
                     std::size_t batch) {
  broker::connection conn{s.redis};
  broker::inbox inbox{conn, s.broker};
  std::vector<std::string> chunk;
  auto start = clock::now();
  for (std::size_t i = 0; i < entries.size(); i += batch) {
    chunk.assign(entries.begin() + static_cast<std::ptrdiff_t>(i),
                 entries.begin() + static_cast<std::ptrdiff_t>(
                                       std::min(i + batch, entries.size())));
    inbox.apply_batch(chunk);
  }
  return static_cast<double>(entries.size()) / seconds_since(start);
}

/// The writer's and the relay's database primitives on SQLite.
void measure_sqlite(stage_context& ctx) {
  auto& out = ctx.out;
  const auto& scale = ctx.scale;
  auto commit_batch = ctx.space.base().run.commit_batch;
  for (std::string sync : {"FULL", "NORMAL"}) {
    ctx.progress("ceiling: SQLite order transactions, synchronous " + sync);
    auto s = ctx.space.fresh("ceiling-orders", sync);
    out.add({"ceiling", "sqlite_order_txn_" + sync,
             "SQLite, one transaction per order (key, order, outbox), " + sync,
             raw_order_inserts(s.db, scale.orders_one_per_txn, 1), "orders/s",
             ""});
    out.add({"ceiling", "sqlite_order_group_" + sync,
             "SQLite, " + std::to_string(commit_batch) +
                 " orders per transaction, synchronous " + sync,
             raw_order_inserts(s.db, scale.orders_grouped, commit_batch),
             "orders/s", ""});
  }

  ctx.progress("ceiling: raw claim+ack cycle");
  auto s =
      ctx.space.fresh("ceiling-claim", ctx.space.base().db.relay_synchronous);
  fill_outbox(s.db, scale.relay_events, scale.relay_events / 2,
              storage::row_status::pending, "raw");
  out.add({"ceiling", "claim_ack_raw",
           "SQLite claim+ack cycle (relay_synchronous), no head-of-line or "
           "fence, batch " +
               std::to_string(s.lease.batch),
           raw_claim_ack(s.db, scale.relay_events, s.lease.batch), "events/s",
           ""});
}

/// The same on PostgreSQL: orders commit synchronously there whatever
/// db.synchronous says, so there is one pair of order figures.
void measure_postgres(stage_context& ctx) {
  auto& out = ctx.out;
  const auto& scale = ctx.scale;
  auto commit_batch = ctx.space.base().run.commit_batch;
  ctx.progress("ceiling: PostgreSQL order transactions");
  auto s = ctx.space.fresh("ceiling-orders");
  out.add({"ceiling", order_ceiling(ctx.space, s, "txn"),
           "PostgreSQL, one transaction per order (key, order, outbox in one "
           "statement)",
           postgres_order_inserts(s.db, scale.orders_one_per_txn, 1),
           "orders/s", ""});
  s = ctx.space.fresh("ceiling-orders");
  out.add({"ceiling", order_ceiling(ctx.space, s, "group"),
           "PostgreSQL, " + std::to_string(commit_batch) +
               " orders per transaction, in one statement",
           postgres_order_inserts(s.db, scale.orders_grouped, commit_batch),
           "orders/s", ""});

  ctx.progress("ceiling: raw claim+ack cycle");
  s = ctx.space.fresh("ceiling-claim");
  fill_outbox(s.db, scale.relay_events, scale.relay_events / 2,
              storage::row_status::pending, "raw");
  out.add(
      {"ceiling", "claim_ack_raw",
       "PostgreSQL claim+ack cycle (as relays commit), no "
       "head-of-line or fence, batch " +
           std::to_string(s.lease.batch),
       postgres_claim_ack(s.db.for_relay(), scale.relay_events, s.lease.batch),
       "events/s", ""});
}

} // namespace

std::string order_ceiling(const workspace& space, const config::settings& s,
                          const std::string& kind) {
  return space.postgres() ? "postgres_order_" + kind
                          : "sqlite_order_" + kind + "_" + s.db.synchronous;
}

void measure_ceilings(stage_context& ctx) {
  if (ctx.space.postgres())
    measure_postgres(ctx);
  else
    measure_sqlite(ctx);
  auto& out = ctx.out;
  const auto& scale = ctx.scale;
  // Any settings with the bench's keys and Redis: the scratch database is
  // not used below.
  const auto& s = ctx.space.base();

  ctx.progress("ceiling: Redis RPUSH and inbox script, pipelined");
  auto entries = encoded_entries(0, scale.consumer_entries, "ceiling");
  out.add({"ceiling", "redis_rpush",
           "Redis RPUSH of " + std::to_string(s.lease.batch) +
               " entries, 8 per round trip",
           pipelined_rpush(s, entries, s.lease.batch), "entries/s", ""});
  out.add({"ceiling", "inbox_script",
           "Redis inbox script per entry, 256 per round trip",
           pipelined_inbox_script(s, entries, 256), "entries/s", ""});
  ctx.space.clear_redis();
  out.add({"ceiling", "inbox_batched",
           "Redis inbox script, one call per 256 entries",
           batched_inbox(s, entries, 256), "entries/s", ""});
  ctx.space.clear_redis();

  // One relay does its database work and its publish one after the other.
  auto claim_ack = out.value("claim_ack_raw").value_or(0);
  auto rpush = out.value("redis_rpush").value_or(0);
  if (claim_ack > 0 && rpush > 0)
    out.add({"ceiling", "relay_serial",
             "claim+ack then RPUSH, serially (one relay's bound)",
             1 / (1 / claim_ack + 1 / rpush), "events/s", ""});
}

} // namespace outbox::bench
