#pragma once

#include "config/settings.hpp"

namespace outbox::bench {

/// CPU time spent between construction and a reading, in this process (every
/// thread) and in the Redis server: what a stage cost, beyond how long it
/// took. On a small machine shared with Redis, it tells whether a figure is
/// bound by CPU and by whose.
class cpu_meter {
public:
  explicit cpu_meter(const config::settings& s);

  /// CPU seconds this process used since construction.
  double own_seconds() const;
  /// CPU seconds redis-server used since construction (INFO cpu).
  double redis_seconds() const;

private:
  const config::settings& settings_;
  double own_start_;
  double redis_start_;
};

} // namespace outbox::bench
