#pragma once

// What the inbox tests share: entries as a relay publishes them, and a
// private Redis with the inbox's key names and readers for its counters.

#include "broker/inbox.hpp"
#include "broker/keys.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace outbox::test {

class inbox_fixture : public redis_fixture {
protected:
  using json = nlohmann::json;
  using outcome = broker::applied_entry::outcome;

  /// An encoded OrderPlaced entry: its effect reserves `qty` of `sku`.
  static std::string order_placed(const std::string& event_id,
                                  const std::string& aggregate,
                                  std::int64_t seq, const std::string& sku,
                                  std::int64_t qty);

  /// An encoded follow-up entry of `type`: no effect, only a place in its
  /// aggregate's order.
  static std::string follow_up(const std::string& event_id,
                               const std::string& aggregate, std::int64_t seq,
                               const std::string& type);

  long long counter(const std::string& name) {
    return hash_integer(names_.counters, name);
  }
  long long reserved(const std::string& sku) {
    return hash_integer(names_.reserved, sku);
  }

  broker::keys names_;
};

} // namespace outbox::test
