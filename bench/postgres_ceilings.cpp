#include "bench/postgres_ceilings.hpp"

#include "bench/stages.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// Raw libpq, not storage::postgres::session: a ceiling is what the
// primitive costs without any of our code around it.

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

struct result_deleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using owned_result = std::unique_ptr<PGresult, result_deleter>;

class raw_link {
public:
  explicit raw_link(const storage::db_options& db)
      : conn_(PQconnectdb(db.path.c_str())) {
    if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
      std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
      PQfinish(conn_);
      throw std::runtime_error("ceiling: cannot connect to " +
                               db.display_name() + ": " + why);
    }
  }
  ~raw_link() { PQfinish(conn_); }
  raw_link(const raw_link&) = delete;
  raw_link& operator=(const raw_link&) = delete;

  owned_result exec(const char* sql) { return checked(PQexec(conn_, sql)); }

  void prepare(const char* name, const char* sql) {
    checked(PQprepare(conn_, name, sql, 0, nullptr));
  }

  owned_result run(const char* name, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params)
      values.push_back(p.c_str());
    return checked(PQexecPrepared(conn_, name, static_cast<int>(values.size()),
                                  values.data(), nullptr, nullptr, 0));
  }

private:
  owned_result checked(PGresult* raw) {
    owned_result r{raw};
    auto status = PQresultStatus(raw);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      throw std::runtime_error(std::string{"ceiling: "} +
                               PQerrorMessage(conn_));
    return r;
  }

  PGconn* conn_;
};

} // namespace

double postgres_order_inserts(const storage::db_options& db,
                              std::int64_t orders, int group) {
  raw_link link{db};
  link.exec("SET synchronous_commit = on");
  // A transaction's orders in one statement, as the writer's place_orders:
  // $1 orders from number $2 on, each with its key, order and outbox row
  // (the seq trigger runs for each, as for any insert).
  link.prepare(
      "orders",
      "WITH n AS MATERIALIZED (SELECT g, nextval('orders_id_seq') AS id,"
      " ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid"
      " AS event_id"
      " FROM generate_series($2::bigint, $2::bigint + $1::bigint - 1) g), "
      "o AS (INSERT INTO orders (id, sku, qty) SELECT id, 'sku-1', 1 FROM n), "
      "e AS (INSERT INTO outbox (event_id, aggregate_id, event_type, payload)"
      " SELECT event_id, 'order-' || id, 'OrderPlaced',"
      " format('{\"order_id\":%s,\"sku\":\"sku-1\",\"qty\":1}', id)::json"
      " FROM n) "
      "INSERT INTO request_keys (request_id, fingerprint, order_id, event_id)"
      " SELECT 'raw-request-' || g, 'sku-1|1', id, event_id FROM n");
  auto start = clock::now();
  for (std::int64_t done = 0; done < orders;) {
    auto count = std::min<std::int64_t>(group, orders - done);
    link.exec("BEGIN");
    link.run("orders", {std::to_string(count), std::to_string(done)});
    link.exec("COMMIT");
    done += count;
  }
  return static_cast<double>(orders) / seconds_since(start);
}

double postgres_claim_ack(const storage::db_options& db, std::int64_t rows,
                          int batch) {
  raw_link link{db};
  // As the relays' sessions commit (storage/postgres/session.cpp).
  link.exec(db.synchronous == "FULL" ? "SET synchronous_commit = on"
                                     : "SET synchronous_commit = off");
  // The walk goes by the partial index of unpublished rows, as the
  // relay's does: published history is not in it.
  link.prepare("claim",
               "UPDATE outbox SET status = 'SENDING', owner = 'raw', "
               "lease_until = clock_timestamp() + interval '10 s', "
               "lease_epoch = lease_epoch + 1, attempts = attempts + 1 "
               "WHERE id IN (SELECT id FROM outbox WHERE published_at IS NULL"
               " AND status = 'PENDING' ORDER BY aggregate_id, seq LIMIT $1 "
               "FOR UPDATE SKIP LOCKED) "
               "RETURNING id, event_id, aggregate_id, seq, payload");
  link.prepare("ack", "UPDATE outbox SET status = 'PUBLISHED', owner = NULL, "
                      "lease_until = NULL, published_at = clock_timestamp() "
                      "WHERE id = ANY($1::bigint[])");
  std::int64_t moved = 0;
  std::string ids;
  auto start = clock::now();
  while (moved < rows) {
    auto claimed = link.run("claim", {std::to_string(batch)});
    auto n = PQntuples(claimed.get());
    if (n == 0)
      break;
    ids = "{";
    for (int i = 0; i < n; ++i) {
      if (i > 0)
        ids += ',';
      ids += PQgetvalue(claimed.get(), i, 0);
      // Read the columns the relay needs, as it would.
      std::string payload = PQgetvalue(claimed.get(), i, 4);
      (void)payload;
    }
    ids += '}';
    link.run("ack", {ids});
    moved += n;
  }
  return static_cast<double>(moved) / seconds_since(start);
}

} // namespace outbox::bench
