#include "bench/fill.hpp"

#include "bench/postgres_fill.hpp"
#include "broker/connection.hpp"
#include "broker/publisher.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace outbox::bench {

namespace {

/// The payload the writer gives an OrderPlaced event.
std::string order_payload(std::int64_t i) {
  return "{\"order_id\":" + std::to_string(i) + ",\"sku\":\"sku-" +
         std::to_string(i % 20 + 1) + "\",\"qty\":1}";
}

/// The headers the writer gives it: a traceparent of a trace of its own
/// (made from i here, so that a run is repeatable).
std::string order_headers(std::int64_t i) {
  std::array<char, 56> text{};
  std::snprintf(text.data(), text.size(), "00-%032llx-%016llx-01",
                static_cast<unsigned long long>(i) + 1,
                static_cast<unsigned long long>(i) + 1);
  return R"({"traceparent":")" + std::string{text.data()} + "\"}";
}

} // namespace

void fill_outbox(const storage::db_options& db, std::int64_t events,
                 std::int64_t aggregates, storage::row_status status,
                 const std::string& tag, std::int64_t at) {
  if (db.postgres())
    return fill_outbox_postgres(db, events, aggregates, status, tag, at);
  auto options = db;
  options.synchronous = "OFF"; // a fixture, not a measurement
  // Rows of any status, written straight into the table: a fixture no
  // store would write (a store only moves rows through the lease protocol).
  auto conn = storage::sqlite::open_database(options);
  SQLite::Transaction transaction{*conn};
  // One statement over a counter: no per-row round trip through C++.
  SQLite::Statement insert{
      *conn,
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n"
      " WHERE i + 1 < ?1)"
      " INSERT INTO outbox (event_id, aggregate_id, seq, event_type, payload,"
      " headers, status, created_at, published_at)"
      " SELECT printf('%s-%d', ?3, i), printf('%s-a%d', ?3, i % ?2),"
      " i / ?2 + 1, 'OrderPlaced',"
      " printf('{\"order_id\":%d,\"sku\":\"sku-%d\",\"qty\":1}', i,"
      " i % 20 + 1),"
      " printf('{\"traceparent\":\"00-%032x-%016x-01\"}', i + 1, i + 1),"
      " ?4, ?5, CASE WHEN ?4 = 'PUBLISHED' THEN ?5 END FROM n"};
  insert.bind(1, events);
  insert.bind(2, std::max<std::int64_t>(aggregates, 1));
  insert.bind(3, tag);
  insert.bind(4, storage::row_status_text(status));
  insert.bind(5, at != 0 ? at : storage::wall_clock_now());
  insert.exec();
  transaction.commit();
}

std::vector<broker::event_entry> filled_entries(const storage::db_options& db,
                                                const std::string& tag) {
  if (db.postgres())
    return filled_entries_postgres(db, tag);
  auto conn = storage::sqlite::open_database(db);
  SQLite::Statement rows{
      *conn, "SELECT event_id, aggregate_id, seq, event_type, payload,"
             " created_at, published_at, COALESCE(headers, '') FROM outbox"
             " WHERE aggregate_id LIKE ?1 || '-a%' ORDER BY rowid"};
  rows.bind(1, tag);
  std::vector<broker::event_entry> entries;
  while (rows.executeStep()) {
    broker::event_entry e;
    e.event_id = rows.getColumn(0).getString();
    e.aggregate_id = rows.getColumn(1).getString();
    e.seq = rows.getColumn(2).getInt64();
    e.event_type = rows.getColumn(3).getString();
    e.payload = rows.getColumn(4).getString();
    e.committed_at = rows.getColumn(5).getInt64();
    e.published_at = rows.getColumn(6).getInt64(); // 0 when NULL
    e.headers = rows.getColumn(7).getString();
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<broker::event_entry>
event_entries(std::int64_t first, std::int64_t count, const std::string& tag) {
  std::vector<broker::event_entry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  auto now = storage::wall_clock_now();
  for (auto i = first; i < first + count; ++i) {
    auto id = tag + "-" + std::to_string(i);
    entries.push_back({id, id, 1, "OrderPlaced", order_payload(i), now, now,
                       order_headers(i)});
  }
  return entries;
}

std::vector<std::string> encoded_entries(std::int64_t first, std::int64_t count,
                                         const std::string& tag) {
  std::vector<std::string> encoded;
  encoded.reserve(static_cast<std::size_t>(count));
  for (const auto& e : event_entries(first, count, tag))
    encoded.push_back(broker::encode(e));
  return encoded;
}

void fill_queues(const config::settings& s, std::int64_t count,
                 const std::string& tag) {
  broker::connection conn{s.redis};
  broker::publisher publisher{conn, s.broker};
  constexpr std::int64_t batch = 1000;
  for (std::int64_t first = 0; first < count; first += batch)
    publisher.publish(
        event_entries(first, std::min(batch, count - first), tag));
}

} // namespace outbox::bench
