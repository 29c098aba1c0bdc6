#pragma once

// Queue entries as a relay publishes them, and dead-letter records as the
// inbox writes them, for the tests that put them in Redis by hand: each test
// names only what its case is about (ids, order, payload, reason), and the
// fields are filled in one place.

#include "broker/entry.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace outbox::test {

/// An entry with no timestamps (0: unknown); a test that needs
/// committed_at or published_at sets them on the result.
inline broker::event_entry event_of(std::string event_id,
                                    std::string aggregate_id, std::int64_t seq,
                                    std::string event_type,
                                    std::string payload) {
  broker::event_entry e;
  e.event_id = std::move(event_id);
  e.aggregate_id = std::move(aggregate_id);
  e.seq = seq;
  e.event_type = std::move(event_type);
  e.payload = std::move(payload);
  return e;
}

/// The same, encoded, committed at `committed_at`.
inline std::string encoded_event(std::string event_id, std::string aggregate_id,
                                 std::int64_t seq, std::string event_type,
                                 std::string payload,
                                 std::int64_t committed_at = 0) {
  auto e = event_of(std::move(event_id), std::move(aggregate_id), seq,
                    std::move(event_type), std::move(payload));
  e.committed_at = committed_at;
  return broker::encode(e);
}

/// An encoded OrderPlaced whose effect reserves `qty` of `sku`, published
/// at a fixed moment.
inline std::string order_placed_event(const std::string& event_id,
                                      const std::string& aggregate_id,
                                      std::int64_t seq, const std::string& sku,
                                      std::int64_t qty) {
  auto e = event_of(event_id, aggregate_id, seq, "OrderPlaced",
                    nlohmann::json{{"sku", sku}, {"qty", qty}}.dump());
  e.published_at = 1700000000000;
  return broker::encode(e);
}

/// A dead-letter record of `entry`, kept whole, set aside for `reason`;
/// `patch` overrides or adds fields (truncated, size, at, error...).
inline std::string
dead_letter_record(const std::string& entry, const std::string& reason,
                   const nlohmann::json& patch = nlohmann::json::object()) {
  nlohmann::json r{{"reason", reason},
                   {"entry", entry},
                   {"size", entry.size()},
                   {"truncated", false}};
  r.update(patch);
  return r.dump();
}

} // namespace outbox::test
