#pragma once

// Event ids: random (version 4) UUIDs, made by the writer so that it knows
// an event's id before its transaction commits (PostgreSQL's writer asks
// after it when a connection broke in COMMIT).

#include <cstdint>
#include <random>
#include <string>

namespace outbox::storage {

/// Makes event ids from one generator, seeded from std::random_device.
/// Not thread-safe: one per store.
class event_id_source {
public:
  event_id_source();
  /// A new id, in canonical lowercase text form.
  std::string next();

private:
  std::mt19937_64 rng_;
};

/// True for the canonical text of a UUID (8-4-4-4-12 hex digits), the only
/// event ids a database holds.
bool is_event_id(const std::string& text);

} // namespace outbox::storage
