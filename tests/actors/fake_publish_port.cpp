#include "tests/actors/fake_publish_port.hpp"

#include "broker/broker_error.hpp"

#include <string>
#include <utility>

namespace outbox::test {

fake_publish_port::fake_publish_port(std::shared_ptr<fake_broker> broker)
    : broker_(std::move(broker)) {}

void fake_publish_port::publish(
    const std::vector<broker::event_entry>& entries) {
  auto& b = *broker_;
  ++b.publish_calls;
  if (b.on_publish)
    b.on_publish();
  if (b.fail_next > 0) {
    --b.fail_next;
    throw broker::broker_error(b.fail_code, "fake broker: injected failure");
  }
  for (const auto& entry : entries) {
    if (b.poisoned_aggregates.count(entry.aggregate_id) > 0)
      throw broker::broker_error(broker::broker_errc::rejected,
                                 "fake broker: WRONGTYPE for aggregate " +
                                     entry.aggregate_id,
                                 broker::server_state::none, {}, {},
                                 broker::refusal_reason::wrong_type);
    if (b.poisoned_events.count(entry.event_id) > 0)
      throw broker::broker_error(broker::broker_errc::rejected,
                                 "fake broker: event " + entry.event_id +
                                     " is over max_entry_bytes",
                                 broker::server_state::none, {}, {},
                                 broker::refusal_reason::entry_too_large);
  }
  // Encode everything before pushing anything: all or nothing.
  std::vector<std::string> encoded;
  encoded.reserve(entries.size());
  for (const auto& entry : entries)
    encoded.push_back(broker::encode(entry));
  auto& list = b.lists[b.queue];
  list.insert(list.end(), encoded.begin(), encoded.end());
  b.batches.push_back(entries);
}

std::function<std::unique_ptr<actors::publish_port>()>
fake_publisher_factory(std::shared_ptr<fake_broker> broker) {
  return [broker] { return std::make_unique<fake_publish_port>(broker); };
}

} // namespace outbox::test
