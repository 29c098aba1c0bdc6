#pragma once

// Hand-made ledger rows and a lookup of one check, for the audit's tests.

#include "audit/conservation.hpp"
#include "storage/ledger.hpp"

#include <stdexcept>
#include <string>

namespace outbox::audit::testing_rows {

inline storage::ledger_row placed(std::string id, std::string sku,
                                  std::int64_t qty,
                                  std::string status = "PUBLISHED") {
  // Each its own order: an order has one OrderPlaced (events_once).
  auto aggregate = "order-" + id;
  return {std::move(id),     std::move(aggregate), 1,  "OrderPlaced",
          std::move(status), std::move(sku),       qty};
}

inline const check& find(const verdict& v, const std::string& name) {
  for (const auto& c : v.checks)
    if (c.name == name)
      return c;
  throw std::runtime_error("no check " + name);
}

inline storage::ledger_row row_of(std::string id, std::string aggregate,
                                  std::int64_t seq, std::int64_t published_at) {
  storage::ledger_row r{std::move(id), std::move(aggregate), seq,
                        // Not a lifecycle event: an order may have many.
                        "ItemAdded", "PUBLISHED", "", 0};
  r.published_at = published_at;
  return r;
}

} // namespace outbox::audit::testing_rows
