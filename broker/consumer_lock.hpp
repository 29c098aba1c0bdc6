#pragma once

// One process consumes the queues at a time. Several consumer processes can
// run (for availability): the one holding this lock consumes, the others
// wait and take over when it stops renewing (a crash, a pause, a lost
// network), after recovering its in-flight entries. Partitions give order
// only while one consumer reads each; a lock per process keeps that true
// across processes without a rebalancing protocol, and the fence
// (broker/fence.hpp) keeps a process that lost the lock from popping or
// applying anything after the takeover.

#include "broker/lua_script.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

class connection;

class consumer_lock {
public:
  consumer_lock(connection& conn, std::string key);

  /// Takes the lock for `holder` when nobody holds it, or extends it when
  /// `holder` does, for `ttl_ms`. Returns who holds it after the call:
  /// `holder` when this process may consume. Throws broker_error.
  std::string hold(const std::string& holder, std::int64_t ttl_ms);

  /// Gives the lock up if `holder` holds it, so another process takes over
  /// at once instead of after the ttl. Throws broker_error.
  void release(const std::string& holder);

private:
  connection& conn_;
  std::string key_;
  lua_script hold_;
  lua_script release_;
};

} // namespace outbox::broker
