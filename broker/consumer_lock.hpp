#pragma once

// One process consumes the queues at a time. Several consumer processes can
// run (for availability): the one holding this lock consumes, the others
// wait and take over when it stops renewing (a crash, a pause, a lost
// network), after recovering its in-flight entries. Partitions give order
// only while one consumer reads each; a lock per process keeps that true
// across processes without a rebalancing protocol, and the fence
// (broker/fence.hpp) keeps a process that lost the lock from popping or
// applying anything after the takeover.
//
// Each acquisition uses a new token, and a consumer's fence carries the
// token it was started under: a lock that lapsed and was taken again, even
// by the same process, never lets the consumers of an earlier acquisition
// go on (another process may have recovered their entries in between).

#include "broker/broker_fwd.hpp"
#include "broker/lua_script.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

class consumer_lock {
public:
  /// The lock `key`; processes noted in "<key>.processes"
  /// (keys::consumer_processes()).
  consumer_lock(connection& conn, std::string key);

  /// The lock `key`, each process noted in the hash `processes` while it
  /// acquires or renews: "consuming" or "standby", since when, and until
  /// when the note holds (broker/consumer_processes.hpp reads it).
  consumer_lock(connection& conn, std::string key, std::string processes);

  /// Takes the lock for `token` when nobody holds it, for `ttl_ms`.
  /// Returns who holds it after the call: `token` when this acquisition
  /// may consume. Throws broker_error.
  std::string acquire(const std::string& token, std::int64_t ttl_ms);

  /// Extends the lock by `ttl_ms` if `token` holds it, never takes it.
  /// Returns who holds it ("" when it lapsed). Throws broker_error.
  std::string renew(const std::string& token, std::int64_t ttl_ms);

  /// Gives the lock up if `token` holds it, so another process takes over
  /// at once instead of after the ttl. Throws broker_error.
  void release(const std::string& token);

private:
  connection& conn_;
  std::string key_;
  std::string processes_;
  lua_script acquire_;
  lua_script renew_;
  lua_script release_;
};

} // namespace outbox::broker
