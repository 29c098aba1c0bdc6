#include "bench/postgres_fill.hpp"

#include "storage/postgres/session.hpp"

#include <algorithm>

namespace outbox::bench {

void fill_outbox_postgres(const storage::db_options& db, std::int64_t events,
                          std::int64_t aggregates, storage::row_status status,
                          const std::string& tag, std::int64_t at) {
  storage::postgres::session link{db};
  link.exec("fill", "SET synchronous_commit = off"); // a fixture
  link.transaction("fill", [&] {
    // The seq trigger allocates one row at a time under the aggregate's
    // lock: right for writers, minutes for a million-row fixture. The bench
    // owns this database and nothing else writes it during a fill, so the
    // fixture sets seqs itself (contiguous from 1 per aggregate, in id
    // order) and moves the heads to match.
    link.exec("fill", "ALTER TABLE outbox DISABLE TRIGGER outbox_allocate_seq");
    link.query(
        "fill",
        "INSERT INTO outbox (event_id, aggregate_id, seq, event_type, "
        "payload, headers, status, created_at, published_at) "
        "SELECT md5($3 || '-' || i)::uuid, $3 || '-a' || (i % $2), "
        "i / $2 + 1, 'OrderPlaced', "
        "format('{\"order_id\":%s,\"sku\":\"sku-%s\",\"qty\":1}', i, "
        "i % 20 + 1)::json, "
        "format('{\"traceparent\":\"00-%s-%s-01\"}', lpad(to_hex(i + 1), 32, "
        "'0'), lpad(to_hex(i + 1), 16, '0'))::json, "
        "$4, t, CASE WHEN $4 = 'PUBLISHED' THEN t END "
        "FROM generate_series(0, $1::bigint - 1) AS i, "
        "LATERAL (SELECT CASE WHEN $5::bigint = 0 THEN clock_timestamp() "
        "ELSE outbox_ts($5::bigint) END AS t) AS at",
        {std::to_string(events),
         std::to_string(std::max<std::int64_t>(aggregates, 1)), tag,
         storage::row_status_text(status), std::to_string(at)});
    link.query("fill",
               "INSERT INTO aggregate_heads (aggregate_id, last_seq) "
               "SELECT aggregate_id, max(seq) FROM outbox "
               "WHERE aggregate_id LIKE $1 || '-a%' GROUP BY aggregate_id "
               "ON CONFLICT (aggregate_id) DO UPDATE "
               "SET last_seq = greatest(aggregate_heads.last_seq, "
               "excluded.last_seq)",
               {tag});
    link.exec("fill", "ALTER TABLE outbox ENABLE TRIGGER outbox_allocate_seq");
  });
  // What autovacuum would soon do after a bulk load, done now so that it
  // does not run during a timed stage (its scan of a million new rows
  // doubled some claims): statistics, hint bits, the visibility map.
  link.exec("fill", "VACUUM (ANALYZE) outbox");
}

std::vector<broker::event_entry>
filled_entries_postgres(const storage::db_options& db, const std::string& tag) {
  storage::postgres::session link{db};
  auto rows = link.query(
      "fill",
      "SELECT event_id::text, aggregate_id, seq, event_type, payload::text, "
      "coalesce(headers::text, ''), outbox_ms(created_at), "
      "coalesce(outbox_ms(published_at), 0) "
      "FROM outbox WHERE aggregate_id LIKE $1 || '-a%' ORDER BY id",
      {tag});
  std::vector<broker::event_entry> entries;
  entries.reserve(static_cast<std::size_t>(rows.rows()));
  for (int i = 0; i < rows.rows(); ++i)
    entries.push_back({rows.text(i, 0), rows.text(i, 1), rows.int64(i, 2),
                       rows.text(i, 3), rows.text(i, 4), rows.int64(i, 6),
                       rows.int64(i, 7), rows.text(i, 5)});
  return entries;
}

} // namespace outbox::bench
