#pragma once

// Event ids: version 7 UUIDs (RFC 9562: 48 bits of Unix time in ms, then
// 74 random bits), made by the writer so that it knows an event's id before
// its transaction commits (PostgreSQL's writer asks after it when a
// connection broke in COMMIT). Time first, so a new id goes at the right
// edge of the event_id index: a random (version 4) id touched one random
// index page per row, which was most of the writer's page writes. The
// random bits keep ids unguessable in practice; the time in them is the
// row's created_at anyway.

#include <cstdint>
#include <random>
#include <string>

namespace outbox::storage {

/// A generator seeded from std::random_device (256 bits).
std::mt19937_64 seeded_rng();

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
