#include "storage/store_error.hpp"

namespace outbox::storage {

const char* to_string(store_errc code) {
  switch (code) {
  case store_errc::busy:
    return "busy";
  case store_errc::io:
    return "io";
  case store_errc::schema:
    return "schema";
  case store_errc::invalid_input:
    return "invalid_input";
  case store_errc::internal:
    return "internal";
  case store_errc::outcome_unknown:
    return "outcome_unknown";
  }
  return "internal";
}

} // namespace outbox::storage
