#pragma once

// The pipeline fixture seen from consumers: the fake broker's lists by name
// and the event ids they hold, shared by the consumer tests (batches,
// recovery after a crash, Redis errors).

#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "pipeline_fixture.hpp"

#include <deque>
#include <string>
#include <variant>
#include <vector>

namespace outbox::test {

class consumer_fixture : public pipeline_fixture {
protected:
  const std::string& queue() const { return broker_->queue; }
  std::string processing(const std::string& consumer,
                         const std::string& queue_name = "") {
    broker::keys names;
    names.queue = broker_->queue;
    return names.processing_for(queue_name.empty() ? queue() : queue_name,
                                consumer);
  }
  std::deque<std::string>& list(const std::string& name) {
    return broker_->lists[name];
  }
  /// The event ids of a list, head first.
  std::vector<std::string> ids_in(const std::string& name) {
    std::vector<std::string> ids;
    for (const auto& text : list(name))
      ids.push_back(
          std::get<broker::event_entry>(broker::decode(text)).event_id);
    return ids;
  }
};

} // namespace outbox::test
