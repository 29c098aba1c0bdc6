#include "storage/sqlite/order_store.hpp"

#include "storage/event_ids.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <optional>

namespace outbox::storage::sqlite {

namespace {

constexpr const char* order_placed_type = "OrderPlaced";

std::string lowercase(std::string text) {
  for (auto& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

} // namespace

struct order_store::impl {
  explicit impl(SQLite::Database& database)
      : db(database), name(database_name(database)),
        find_request(db, "SELECT fingerprint, order_id, event_id"
                         " FROM request_keys WHERE request_id = ?"),
        insert_order(db, "INSERT INTO orders (sku, qty, created_at)"
                         " VALUES (?, ?, ?)"),
        // After the outbox's rows, or the head a purge kept when it deleted
        // them all (aggregate_heads): never back to a seq already used.
        next_seq(db, "SELECT MAX(COALESCE((SELECT MAX(seq) FROM outbox"
                     " WHERE aggregate_id = ?1), 0), COALESCE((SELECT"
                     " last_seq FROM aggregate_heads WHERE aggregate_id = ?1),"
                     " 0)) + 1"),
        insert_event(db, "INSERT INTO outbox (event_id, aggregate_id, seq,"
                         " event_type, payload, created_at, available_at)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?)"),
        find_event(db, "SELECT aggregate_id, seq, event_type FROM outbox"
                       " WHERE event_id = ?"),
        insert_request_key(db, "INSERT INTO request_keys (request_id,"
                               " fingerprint, order_id, event_id, created_at)"
                               " VALUES (?, ?, ?, ?, ?)") {}

  placed_order place(const order_request& request, millis now);
  appended_event append(const event_request& request, millis now);
  std::int64_t allocate_seq(const std::string& aggregate_id);
  std::optional<appended_event> find_appended(const event_request& request,
                                              const std::string& event_id);
  std::string insert_outbox_row(const std::string& aggregate_id,
                                std::int64_t seq, const std::string& type,
                                const std::string& payload, millis now,
                                std::string event_id = {});

  SQLite::Database& db;
  std::string name;
  SQLite::Statement find_request;
  SQLite::Statement insert_order;
  SQLite::Statement next_seq;
  SQLite::Statement insert_event;
  SQLite::Statement find_event;
  SQLite::Statement insert_request_key;
  event_id_source event_ids;
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
  // Normally 1; allocating keeps UNIQUE(aggregate_id, seq) safe even if
  // events were appended to "order-<id>" before the order existed.
  auto seq = allocate_seq(result.aggregate_id);
  result.event_id = insert_outbox_row(result.aggregate_id, seq,
                                      order_placed_type, payload.dump(), now);
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

appended_event order_store::impl::append(const event_request& request,
                                         millis now) {
  // Lowercase, as PostgreSQL's uuid prints it: a retry spelled otherwise
  // is the same event.
  auto event_id = lowercase(request.event_id);
  if (!event_id.empty())
    if (auto found = find_appended(request, event_id))
      return *found;
  appended_event result;
  result.aggregate_id = request.aggregate_id;
  result.seq = allocate_seq(request.aggregate_id);
  result.event_id =
      insert_outbox_row(request.aggregate_id, result.seq, request.event_type,
                        request.payload, now, std::move(event_id));
  return result;
}

/// The row an event_id names already (a retry: replayed), or nothing. The
/// same id with another aggregate or type names another event: refused.
/// The payload is not compared: one event_id is one event (as
/// outbox_append_once on PostgreSQL).
std::optional<appended_event>
order_store::impl::find_appended(const event_request& request,
                                 const std::string& event_id) {
  statement_use query{find_event};
  query->bind(1, event_id);
  if (!query->executeStep())
    return std::nullopt;
  appended_event found{event_id, query->getColumn(0).getString(),
                       query->getColumn(1).getInt64(), true};
  auto type = query->getColumn(2).getString();
  if (found.aggregate_id != request.aggregate_id || type != request.event_type)
    throw store_error(store_errc::invalid_input,
                      "event_id " + event_id + " already names " + type +
                          " of " + found.aggregate_id + " (seq " +
                          std::to_string(found.seq) + "), not " +
                          request.event_type + " of " + request.aggregate_id);
  return found;
}

std::int64_t order_store::impl::allocate_seq(const std::string& aggregate_id) {
  // Safe because we hold the write lock (BEGIN IMMEDIATE) until commit.
  statement_use query{next_seq};
  query->bind(1, aggregate_id);
  query->executeStep();
  return query->getColumn(0).getInt64();
}

std::string order_store::impl::insert_outbox_row(
    const std::string& aggregate_id, std::int64_t seq, const std::string& type,
    const std::string& payload, millis now, std::string event_id) {
  if (event_id.empty())
    event_id = event_ids.next();
  statement_use insert{insert_event};
  insert->bind(1, event_id);
  insert->bind(2, aggregate_id);
  insert->bind(3, seq);
  insert->bind(4, type);
  insert->bind(5, payload);
  insert->bind(6, now);
  insert->bind(7, now);
  insert->exec();
  return event_id;
}

order_store::order_store(SQLite::Database& db)
    : impl_(prepare_store<impl>(db, "order_store")) {}

order_store::~order_store() = default;

placed_order order_store::place_order(const order_request& request,
                                      millis now) {
  return place_orders({request}, now).front();
}

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

appended_event order_store::append_event(const event_request& request,
                                         millis now) {
  return append_events({request}, now).front();
}

std::vector<appended_event>
order_store::append_events(const std::vector<event_request>& requests,
                           millis now) {
  return write_batch<appended_event>(
      *impl_, requests, "append_event",
      [&](const event_request& r) { return impl_->append(r, now); });
}

void order_store::set_before_commit(std::function<void()> hook) {
  impl_->before_commit = std::move(hook);
}

} // namespace outbox::storage::sqlite
