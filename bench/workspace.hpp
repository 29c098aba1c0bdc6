#pragma once

#include "config/settings.hpp"

#include <string>

namespace outbox::bench {

/// The benchmark's scratch space: a private folder for its database files
/// (removed at the end) and key names of its own on the configured Redis, so
/// a benchmark never touches the pipeline's data.
class workspace {
public:
  /// Creates a fresh folder under `parent` (the system's temp folder when
  /// empty). `base` gives the Redis endpoint and the run/lease knobs.
  workspace(const std::string& parent, config::settings base);
  ~workspace();
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;

  /// Settings for a new, empty, initialised database file `name` with
  /// PRAGMA synchronous = `synchronous`, the bench's keys, and Redis
  /// cleared of them.
  config::settings fresh(const std::string& name,
                         const std::string& synchronous = "FULL");

  /// Deletes every key the bench uses (queues, inbox hashes, counters,
  /// dead letters, processing lists).
  void clear_redis() const;

  const config::settings& base() const { return base_; }
  const std::string& folder() const { return folder_; }

private:
  std::string folder_;
  config::settings base_;
};

/// The pipeline's key names with "bench." in front of each.
broker::keys bench_keys(broker::keys names);

} // namespace outbox::bench
