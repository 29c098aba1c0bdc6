#include "actors/messages.hpp"

#include <caf/atom.hpp>

namespace outbox::actors {

std::string to_string(ec code) {
  switch (code) {
  case ec::none:
    return "none";
  case ec::idempotency_conflict:
    return "idempotency_conflict";
  case ec::invalid_input:
    return "invalid_input";
  case ec::store_busy:
    return "store_busy";
  case ec::store_failure:
    return "store_failure";
  case ec::broker_unavailable:
    return "broker_unavailable";
  case ec::injected_crash:
    return "injected_crash";
  case ec::consumer_fenced:
    return "consumer_fenced";
  case ec::setup_failed:
    return "setup_failed";
  case ec::store_outcome_unknown:
    return "store_outcome_unknown";
  }
  return "unknown";
}

bool has_code(const caf::error& error, ec code) {
  // category() dereferences a null pointer on an empty error in CAF 0.17.
  return error && error.category() == caf::atom("outbox") &&
         error.code() == static_cast<std::uint8_t>(code);
}

} // namespace outbox::actors
