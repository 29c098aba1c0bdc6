#include "actors/outage.hpp"

#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

namespace outbox::actors {

bool is_outage(const std::exception& e) {
  if (const auto* b = dynamic_cast<const broker::broker_error*>(&e))
    return b->code() == broker::broker_errc::unavailable;
  if (const auto* s = dynamic_cast<const storage::store_error*>(&e))
    return s->code() == storage::store_errc::busy;
  return false;
}

} // namespace outbox::actors
