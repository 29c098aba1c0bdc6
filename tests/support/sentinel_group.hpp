#pragma once

// A Redis under Sentinel for one test: a master, one replica of it and
// three sentinels monitoring it (quorum 2), each a private redis-server on
// a loopback port (support/redis_server.hpp). What a production Redis with
// failover looks like, small.

#include "broker/connection.hpp"
#include "support/redis_server.hpp"

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

class sentinel_group {
public:
  /// Returns once every sentinel knows the master and its replica.
  explicit sentinel_group(std::string master_name = "outbox-test");

  const std::string& master_name() const { return name_; }
  /// The servers as started: after a failover `first_replica()` is the
  /// master.
  redis_server& first_master() { return *master_; }
  redis_server& first_replica() { return *replica_; }
  redis_server& sentinel(std::size_t i) { return *sentinels_.at(i); }

  /// The sentinels, as a client names them, with a short timeout.
  broker::sentinel_set sentinels() const;
  /// Options for a connection that follows the master through them.
  broker::connection_options connection_options() const;
  /// The redis-sentinel:// address naming them (for --redis).
  std::string uri() const;

  /// SENTINEL FAILOVER; returns once every sentinel names `first_replica()`
  /// master and the old master answers ROLE as a replica (at most 30 s,
  /// else throws std::runtime_error).
  void fail_over();

  /// True when every sentinel names `where` master now.
  bool names_master(const broker::endpoint& where) const;

  /// Waits until every sentinel names `where` master (at most 30 s).
  void wait_until_master(const broker::endpoint& where);

  /// Waits until the server at `where` answers ROLE as a replica (at most
  /// 30 s): a restarted or woken old master once the sentinels demoted it.
  void wait_until_replica(const broker::endpoint& where);

private:
  std::string name_;
  std::unique_ptr<redis_server> master_;
  std::unique_ptr<redis_server> replica_;
  std::vector<std::unique_ptr<redis_server>> sentinels_;
};

/// The redis-sentinel:// address of `set` (its sentinels and master name).
std::string sentinel_uri(const broker::sentinel_set& set);

/// The first element of ROLE at `where`: master, slave or sentinel ("" when
/// it cannot be read).
std::string role_of(const broker::endpoint& where);

} // namespace outbox::test
