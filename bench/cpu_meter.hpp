#pragma once

#include "config/settings.hpp"

#include <sys/types.h>

#include <optional>

namespace outbox::bench {

/// CPU seconds redis-server has used since it started (INFO cpu).
double redis_cpu_seconds(const config::settings& s);

/// CPU time spent between construction and a reading, in this process (every
/// thread), in the Redis server and in a PostgreSQL server on this machine:
/// what a stage cost, beyond how long it took. On a small machine shared
/// with the servers, it tells whether a figure is bound by CPU and by whose.
class cpu_meter {
public:
  explicit cpu_meter(const config::settings& s);

  /// CPU seconds this process used since construction.
  double own_seconds() const;
  /// CPU seconds redis-server used since construction (INFO cpu).
  double redis_seconds() const;
  /// CPU seconds the database server used since construction: 0 on SQLite
  /// (its work is this process's) and for a PostgreSQL server elsewhere.
  double database_seconds() const;

private:
  const config::settings& settings_;
  double own_start_;
  double redis_start_;
  std::optional<pid_t> postmaster_;
  double database_start_ = 0;
};

} // namespace outbox::bench
