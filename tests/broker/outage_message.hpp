#pragma once

// What a connection says when Redis cannot be reached, for the broker's
// tests of outages (a server gone, a sentinel that names none).

#include "broker/broker_error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace outbox::test {

/// Runs `call`, which must throw broker_error(unavailable): an outage, not
/// a refusal; returns its message (empty, and a failure, when it does not).
template <class F>
std::string outage_message(F call) {
  try {
    call();
  } catch (const broker::broker_error& e) {
    EXPECT_EQ(e.code(), broker::broker_errc::unavailable) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no broker_error thrown";
  return {};
}

} // namespace outbox::test
