#include "broker/broker_error.hpp"

namespace outbox::broker {

const char* to_string(broker_errc code) {
  switch (code) {
  case broker_errc::unavailable:
    return "unavailable";
  case broker_errc::rejected:
    return "rejected";
  case broker_errc::fenced:
    return "fenced";
  }
  return "unknown";
}

} // namespace outbox::broker
