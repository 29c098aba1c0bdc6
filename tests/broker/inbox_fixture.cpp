#include "tests/broker/inbox_fixture.hpp"

#include "broker/entry.hpp"
#include "tests/broker/event_entries.hpp"

#include <nlohmann/json.hpp>

namespace outbox::test {

std::string inbox_fixture::order_placed(const std::string& event_id,
                                        const std::string& aggregate,
                                        std::int64_t seq,
                                        const std::string& sku,
                                        std::int64_t qty) {
  return order_placed_event(event_id, aggregate, seq, sku, qty);
}

std::string inbox_fixture::follow_up(const std::string& event_id,
                                     const std::string& aggregate,
                                     std::int64_t seq,
                                     const std::string& type) {
  return encoded_event(event_id, aggregate, seq, type,
                       R"({"note":"follow-up"})");
}

} // namespace outbox::test
