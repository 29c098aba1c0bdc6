#include "inbox_fixture.hpp"

#include "broker/entry.hpp"

#include <nlohmann/json.hpp>

namespace outbox::test {

std::string inbox_fixture::order_placed(const std::string& event_id,
                                        const std::string& aggregate,
                                        std::int64_t seq,
                                        const std::string& sku,
                                        std::int64_t qty) {
  broker::event_entry e;
  e.event_id = event_id;
  e.aggregate_id = aggregate;
  e.seq = seq;
  e.event_type = "OrderPlaced";
  e.payload = nlohmann::json{{"sku", sku}, {"qty", qty}}.dump();
  e.published_at = 1700000000000;
  return broker::encode(e);
}

std::string inbox_fixture::follow_up(const std::string& event_id,
                                     const std::string& aggregate,
                                     std::int64_t seq,
                                     const std::string& type) {
  broker::event_entry e;
  e.event_id = event_id;
  e.aggregate_id = aggregate;
  e.seq = seq;
  e.event_type = type;
  e.payload = R"({"note":"follow-up"})";
  return broker::encode(e);
}

} // namespace outbox::test
