#pragma once

#include "bench/postgres_scratch.hpp"
#include "config/settings.hpp"

#include <memory>
#include <string>

namespace outbox::bench {

/// The benchmark's scratch space: a private folder for its database files
/// (removed at the end), or on PostgreSQL a database of its own on the
/// server --db names (dropped at the end), and key names of its own on the
/// configured Redis, so a benchmark never touches the pipeline's data.
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
  /// cleared of them. On PostgreSQL: the scratch database emptied (`name`
  /// and `synchronous` do not apply: orders always commit synchronously,
  /// relays never wait for the WAL flush).
  config::settings fresh(const std::string& name,
                         const std::string& synchronous = "FULL");

  /// `s` (from fresh) as a config file for a pipeline process gives it:
  /// the user's key names and prefix, to which the process (outbox-bench's
  /// pipeline_process_command) adds "bench." (bench_keys), its keyspace
  /// stamp too.
  config::settings for_processes(const config::settings& s) const;

  /// True when the bench measures PostgreSQL.
  bool postgres() const { return scratch_ != nullptr; }
  /// How durable the database's order commits are, for figure names:
  /// PRAGMA synchronous of `s` on SQLite, "PG" on PostgreSQL.
  std::string durability(const config::settings& s) const;

  /// Deletes every key the bench uses (queues, inbox hashes, counters,
  /// dead letters, processing lists).
  void clear_redis() const;

  const config::settings& base() const { return base_; }
  const std::string& folder() const { return folder_; }

private:
  /// Drops the scratch database, removes the folder, deletes the keys.
  void undo();

  std::string folder_;
  config::settings base_;
  config::settings process_base_;
  std::unique_ptr<postgres_scratch> scratch_;
};

/// The pipeline's key names with "bench." in front of each.
broker::keys bench_keys(broker::keys names);

} // namespace outbox::bench
