#include "storage/lease_records.hpp"

namespace outbox::storage {

std::vector<event_lease> claim::leases() const {
  std::vector<event_lease> result;
  result.reserve(events.size());
  for (const auto& event : events)
    result.push_back(event_lease{event.event_id, event.epoch, event.rowid});
  return result;
}

} // namespace outbox::storage
