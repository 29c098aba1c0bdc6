#pragma once

// The order store on a migrated database of either backend, with counts of
// what it wrote and the message of a request it refuses.

#include "storage/order_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace outbox::test {

/// Whether `text` is a version 7 UUID in canonical lowercase form.
inline bool is_uuid_v7(const std::string& text) {
  if (text.size() != 36)
    return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !(std::isdigit(c) || (c >= 'a' && c <= 'f')))
      return false;
  }
  return text[14] == '7' &&
         std::string{"89ab"}.find(text[19]) != std::string::npos;
}

/// Thrown by before_commit hooks: not a std::exception, so a test can tell
/// that it propagates unchanged.
struct injected_crash {};

class order_store_fixture : public contract_fixture {
protected:
  std::int64_t orders() { return scalar("SELECT COUNT(*) FROM orders"); }
  std::int64_t outbox_rows() { return scalar("SELECT COUNT(*) FROM outbox"); }
  std::int64_t request_keys() {
    return scalar("SELECT COUNT(*) FROM request_keys");
  }

  /// The store_error message of an invalid request.
  std::string rejection(const storage::order_request& request) {
    try {
      store_.place_order(request, 1);
    } catch (const storage::store_error& e) {
      EXPECT_EQ(storage::store_errc::invalid_input, e.code());
      return e.what();
    }
    ADD_FAILURE() << "accepted sku=" << request.sku << " qty=" << request.qty;
    return {};
  }

  std::unique_ptr<storage::order_store> orders_ = db_->orders();
  storage::order_store& store_ = *orders_;
};

} // namespace outbox::test
