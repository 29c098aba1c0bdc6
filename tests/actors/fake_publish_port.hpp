#pragma once

// The relay's publish_port (actors/ports.hpp) on a fake_broker.

#include "actors/ports.hpp"
#include "broker/entry.hpp"
#include "tests/actors/fake_broker.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace outbox::test {

/// A publish_port on a fake_broker: all-or-nothing, like the real publisher.
class fake_publish_port : public actors::publish_port {
public:
  explicit fake_publish_port(std::shared_ptr<fake_broker> broker);

  void publish(const std::vector<broker::event_entry>& entries) override;

private:
  std::shared_ptr<fake_broker> broker_;
};

/// A relay_setup::make_publisher that hands out ports on `broker`.
std::function<std::unique_ptr<actors::publish_port>()>
fake_publisher_factory(std::shared_ptr<fake_broker> broker);

} // namespace outbox::test
