#pragma once

#include "storage/clock.hpp"

namespace outbox::storage {

/// Lifecycle of an outbox row (README, "Guarantees and how they are tested").
namespace status {
inline constexpr const char* pending = "PENDING";
inline constexpr const char* sending = "SENDING";
inline constexpr const char* published = "PUBLISHED";
inline constexpr const char* failed = "FAILED";
} // namespace status

} // namespace outbox::storage
