#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;
struct redisReply;

namespace outbox::broker {

/// Where Redis listens.
struct endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;

  /// "host:port" for messages and logs, secrets masked (redact_secrets).
  std::string to_string() const;
};

/// True for a host name or an IP address: letters, digits and . - _ : %
/// only. Refuses a URI or user information ("redis://u:pw@h", "u:pw@h"):
/// such a host would go to the resolver, password included (a URI is read
/// by parse_redis_address, broker/redis_address.hpp).
bool valid_host(std::string_view host);

/// Parses "HOST:PORT"; nothing when malformed (no colon, port not 1..65535,
/// not a valid_host).
std::optional<endpoint> parse_endpoint(std::string_view text);

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

  connection_options options_;
  /// Null while not connected.
  std::unique_ptr<redisContext, context_deleter> context_;
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
