#include "storage/sqlite/order_store.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/event_appender.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <optional>

namespace outbox::storage::sqlite {

namespace {

constexpr const char* order_placed_type = "OrderPlaced";

} // namespace

struct order_store::impl {
  explicit impl(SQLite::Database& database)
      : db(database), name(database_name(database)),
        find_request(db, "SELECT fingerprint, order_id, event_id"
                         " FROM request_keys WHERE request_id = ?"),
        insert_order(db, "INSERT INTO orders (sku, qty, created_at)"
                         " VALUES (?, ?, ?)"),
        events(db),
        insert_request_key(db, "INSERT INTO request_keys (request_id,"
                               " fingerprint, order_id, event_id, created_at)"
                               " VALUES (?, ?, ?, ?, ?)") {}

  placed_order place(const order_request& request, millis now);

  SQLite::Database& db;
  std::string name;
  SQLite::Statement find_request;
  SQLite::Statement insert_order;
  event_appender events;
  SQLite::Statement insert_request_key;
  std::function<void()> before_commit;
};

placed_order order_store::impl::place(const order_request& request,
                                      millis now) {
  placed_order result;
  std::string print;
  if (request.request_id) {
    print = request_fingerprint(request);
    statement_use query{find_request};
    query->bind(1, *request.request_id);
    if (query->executeStep()) {
      result.result = query->getColumn(0).getString() == print
                          ? placed_order::outcome::replayed
                          : placed_order::outcome::conflict;
      result.order_id = query->getColumn(1).getInt64();
      result.event_id = query->getColumn(2).getString();
      result.aggregate_id = order_aggregate_id(result.order_id);
      return result;
    }
  }
  {
    statement_use insert{insert_order};
    insert->bind(1, request.sku);
    insert->bind(2, request.qty);
    insert->bind(3, now);
    insert->exec();
  }
  result.order_id = db.getLastInsertRowid();
  result.aggregate_id = order_aggregate_id(result.order_id);
  nlohmann::ordered_json payload = {{"order_id", result.order_id},
                                    {"sku", request.sku},
                                    {"qty", request.qty}};
  // Its seq is normally 1; allocating keeps UNIQUE(aggregate_id, seq) safe
  // even if events were appended to "order-<id>" before the order existed.
  auto placed = events.append_new(result.aggregate_id, order_placed_type,
                                  payload.dump(), request.headers, now);
  result.event_id = std::move(placed.event_id);
  result.trace_id = std::move(placed.trace_id);
  if (request.request_id) {
    statement_use insert{insert_request_key};
    insert->bind(1, *request.request_id);
    insert->bind(2, print);
    insert->bind(3, result.order_id);
    insert->bind(4, result.event_id);
    insert->bind(5, now);
    insert->exec();
  }
  return result;
}

order_store::order_store(SQLite::Database& db)
    : impl_(prepare_store<impl>(db, "order_store")) {}

order_store::~order_store() = default;

namespace {

/// Validates every request (naming the bad one), then writes them all in
/// one BEGIN IMMEDIATE transaction: the shape of both batch calls.
template <class Result, class Impl, class Request, class Write>
std::vector<Result> write_batch(Impl& im, const std::vector<Request>& requests,
                                const char* operation, Write write_one) {
  require_valid(requests);
  std::vector<Result> results;
  if (requests.empty())
    return results;
  results.reserve(requests.size());
  write_transaction(im.db, operation, im.name, [&] {
    for (const auto& request : requests)
      results.push_back(write_one(request));
    if (im.before_commit)
      im.before_commit();
  });
  return results;
}

} // namespace

std::vector<placed_order>
order_store::place_orders(const std::vector<order_request>& requests,
                          millis now) {
  // A repeated request_id in one batch sees the earlier request's key: it
  // behaves exactly like a later retry (replayed or conflict).
  return write_batch<placed_order>(
      *impl_, requests, "place_order",
      [&](const order_request& r) { return impl_->place(r, now); });
}

std::vector<appended_event>
order_store::append_events(const std::vector<event_request>& requests,
                           millis now) {
  return write_batch<appended_event>(
      *impl_, requests, "append_event",
      [&](const event_request& r) { return impl_->events.append(r, now); });
}

void order_store::set_before_commit(std::function<void()> hook) {
  impl_->before_commit = std::move(hook);
}

} // namespace outbox::storage::sqlite
