#pragma once

// The store_error a call throws, checked for its code.

#include "storage/store_error.hpp"

#include <gtest/gtest.h>

namespace outbox::test {

/// Runs `call` and returns the store_error it throws (fails if none).
template <class Call>
storage::store_error expect_store_error(Call&& call, storage::store_errc code) {
  try {
    call();
  } catch (const storage::store_error& e) {
    EXPECT_EQ(code, e.code()) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected store_error(" << to_string(code) << ")";
  return storage::store_error(storage::store_errc::internal, "none thrown");
}

} // namespace outbox::test
