#pragma once

#include "broker/endpoint.hpp"
#include "broker/sentinel_set.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;
struct redisReply;

namespace outbox::broker {

struct connection_options {
  endpoint where;
  int connect_timeout_ms = 2000;
  /// Bound on every read and write. A blocking command's read waits this
  /// much longer than the time it may block (see blocking_command). 4 s, so
  /// that with the database's 5 s busy timeout the default lease.ttl_ms
  /// (10 s) still outlasts a check held up by both stores (config/validate).
  int io_timeout_ms = 4000;
  // Credentials come last: {where, connect_ms, io_ms} keeps its meaning.
  /// The ACL user to AUTH as; "" with a password: Redis's `default` user
  /// (a requirepass server).
  std::string username;
  /// Sent with AUTH on every connection and reconnection when not empty.
  /// Never shown: messages name the user and the address only.
  std::string password;
  /// The logical database, SELECTed on every connection when not 0.
  int db = 0;
  /// A master under Sentinel: `where` is asked of these sentinels on every
  /// connection (never a remembered address: a killed master restarting
  /// answers as a master from its stale data until Sentinel demotes it),
  /// and the connection is dropped, to ask again, when the server turns out
  /// to be a replica (READONLY, MASTERDOWN, NOREPLICAS, UNBLOCKED).
  std::optional<sentinel_set> sentinel;
  /// A relay's push counts as acknowledged once this many replicas have it
  /// (WAIT on the push's connection, for at most replica_ack_timeout_ms):
  /// replication is asynchronous, and a master that dies before a replica
  /// copied a push takes it along. 0: the master's word (broker/publisher).
  int min_replica_acks = 0;
  int replica_ack_timeout_ms = 1000;
};

struct reply_deleter {
  void operator()(redisReply* reply) const;
};

/// An owned hiredis reply.
using reply = std::unique_ptr<redisReply, reply_deleter>;

struct context_deleter {
  void operator()(redisContext* context) const;
};

/// One Redis connection. Connects lazily; after any connection error the
/// context is dropped and the next command opens a fresh one (hiredis'
/// redisReconnect would lose the I/O timeout). Not thread-safe: one owner.
class connection {
public:
  explicit connection(connection_options options);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Sends one command, binary-safe. Throws broker_error(unavailable) on a
  /// connection problem and broker_error(rejected) on an error reply
  /// (unavailable for a Redis that is not ready yet: see throw_if_error).
  reply command(const std::vector<std::string>& argv);

  /// Sends several commands in one round trip and returns their replies in
  /// order. Error replies are returned, not thrown (the caller decides);
  /// a connection problem throws broker_error(unavailable).
  std::vector<reply>
  pipeline(const std::vector<std::vector<std::string>>& commands);

  /// Like command(), for a command that Redis may hold up to `wait_ms`
  /// (BLMOVE...): the read timeout is raised to wait_ms + io_timeout_ms + 1 s
  /// (Redis times blocked clients out in its cron, so late) for this call,
  /// since hiredis drops a context whose read times out.
  reply blocking_command(const std::vector<std::string>& argv, int wait_ms);

  /// Connects now if not connected. Throws broker_error(unavailable).
  void ensure_connected();

  /// Drops the context (the next call reconnects).
  void reset();

  const connection_options& options() const { return options_; }

  /// Under Sentinel: how many times the master's address changed since
  /// this connection first asked (a failover), 0 otherwise.
  int master_switches() const { return master_switches_; }

private:
  redisContext* context();
  /// AUTH (a password or a user given) and SELECT (a database other than
  /// 0), or a PING when neither is due, on a fresh context,
  /// so that a wrong password, a missing one or a port that is not Redis
  /// is named when connecting, not at some later command.
  /// Throws broker_error(unavailable), the context dropped.
  void introduce();
  /// Sends one command; error replies are returned, not thrown.
  reply send(const std::vector<std::string>& argv);
  [[noreturn]] void fail(const std::string& what);
  /// Under Sentinel, before connecting: `options_.where` as the sentinels
  /// name the master now.
  void follow_master();
  /// Under Sentinel, once connected: throws broker_error(unavailable), the
  /// context dropped, unless the server says ROLE master.
  void confirm_master();
  /// Under Sentinel: drops the context when `r` says the server is no
  /// longer the master, so that the next command asks the sentinels again.
  void forget_master_on(const redisReply& r);

  connection_options options_;
  /// Null while not connected.
  std::unique_ptr<redisContext, context_deleter> context_;
  bool master_known_ = false;
  /// The last master this connection found saying ROLE master.
  endpoint confirmed_;
  int master_switches_ = 0;
};

/// Text of a string/status/error reply; empty for other types.
std::string reply_text(const redisReply& r);

/// Throws broker_error if `r` is an error reply: unavailable for the replies
/// that name the server's state rather than the command (server_state.hpp:
/// a replica, out of memory, loading...), fenced for a fence's refusal,
/// rejected for every other. `where` names the Redis in the message.
void throw_if_error(const redisReply& r, const char* context,
                    const endpoint* where = nullptr);

} // namespace outbox::broker
