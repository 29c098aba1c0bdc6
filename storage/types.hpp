#pragma once

#include "storage/clock.hpp"

namespace outbox::storage {

/// Lifecycle of an outbox row (DESIGN.md, "Status machine").
namespace status {
inline constexpr const char* pending = "PENDING";
inline constexpr const char* sending = "SENDING";
inline constexpr const char* published = "PUBLISHED";
inline constexpr const char* failed = "FAILED";
} // namespace status

} // namespace outbox::storage
