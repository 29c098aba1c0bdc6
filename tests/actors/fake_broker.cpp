#include "tests/actors/fake_broker.hpp"

#include <stdexcept>
#include <string>

namespace outbox::test {

void fake_broker::fail_publishes(int count, broker::broker_errc code) {
  fail_next = count;
  fail_code = code;
}

std::vector<broker::event_entry> fake_broker::published() const {
  std::vector<broker::event_entry> all;
  for (const auto& batch : batches)
    all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

std::size_t fake_broker::times_published(const std::string& event_id) const {
  std::size_t count = 0;
  for (const auto& batch : batches)
    for (const auto& entry : batch)
      count += entry.event_id == event_id ? 1 : 0;
  return count;
}

std::vector<std::int64_t>
fake_broker::seqs_of(const std::string& aggregate_id) const {
  std::vector<std::int64_t> seqs;
  for (const auto& batch : batches)
    for (const auto& entry : batch)
      if (entry.aggregate_id == aggregate_id)
        seqs.push_back(entry.seq);
  return seqs;
}

std::size_t fake_broker::move_back(const std::string& processing,
                                   const std::string& queue) {
  if (processing == queue)
    throw std::invalid_argument("recover: the processing list is the queue");
  trace.push_back("recover " + processing);
  auto& in_flight = lists[processing];
  auto& target = lists[queue];
  auto moved = in_flight.size();
  target.insert(target.begin(), in_flight.begin(), in_flight.end());
  in_flight.clear();
  return moved;
}

} // namespace outbox::test
