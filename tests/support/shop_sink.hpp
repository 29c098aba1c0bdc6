#pragma once

// The shop's consumer with a database of its own (consumer.sink,
// docs/events.md "Effects in your database"), for the tests that run it
// through the real binary: the tables it keeps there and the effects that
// fill them.

#include "support/storage_backend.hpp"

#include <string>
#include <vector>

namespace outbox::test {

/// The shop's effects: a reservation per OrderPlaced, and a row of
/// order_log per event (the OrderPlaced's with its traceparent), so a test
/// can count each effect once and check each order's seq order.
inline constexpr const char* shop_effects =
    "-- The shop's effects, in its own database.\n"
    "-- effect: OrderPlaced\n"
    "INSERT INTO reservations (sku, qty) VALUES (:payload.sku, :payload.qty)\n"
    "  ON CONFLICT (sku) DO UPDATE SET qty = reservations.qty + excluded.qty;\n"
    "INSERT INTO order_log (order_id, seq, kind, trace)\n"
    "  VALUES (:aggregate_id, :seq, :event_type, :headers.traceparent);\n"
    "-- effect: OrderPaid\n"
    "INSERT INTO order_log (order_id, seq, kind)\n"
    "  VALUES (:aggregate_id, :seq, :event_type);\n"
    "-- effect: OrderShipped\n"
    "INSERT INTO order_log (order_id, seq, kind)\n"
    "  VALUES (:aggregate_id, :seq, :event_type);\n";

/// The statements that make the shop's tables in a sink on `kind`:
/// reservations by sku, and order_log with ids in the order its rows were
/// written.
inline std::vector<std::string> shop_tables(backend kind) {
  std::string id = kind == backend::postgres
                       ? "id BIGSERIAL PRIMARY KEY"
                       : "id INTEGER PRIMARY KEY AUTOINCREMENT";
  return {"CREATE TABLE reservations (sku TEXT PRIMARY KEY, qty BIGINT"
          " NOT NULL)",
          "CREATE TABLE order_log (" + id +
              ", order_id TEXT NOT NULL, seq BIGINT NOT NULL,"
              " kind TEXT NOT NULL, trace TEXT)"};
}

} // namespace outbox::test
