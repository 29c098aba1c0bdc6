// What a connection says first, on every connection and reconnection: who
// it is (AUTH) and which logical database it uses (SELECT). Managed and
// shared Redis servers require both; a connection that skipped them after
// a reconnect would write into database 0 or be refused at its next command.

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// What an error reply to AUTH means, in the operator's words. Never holds
/// the password: Redis's replies do not echo it, and neither do we.
std::string auth_refusal(const std::string& error, const std::string& user) {
  if (starts_with(error, "WRONGPASS"))
    return "wrong password (or no such user, or the user is off)";
  if (error.find("without any password configured") != std::string::npos)
    return "it has no password set, but one was given (the --redis URI, "
           "OUTBOX_REDIS_PASSWORD, redis.password_file or redis.password): "
           "remove it, or set one in Redis";
  // Redis before 6 knows no ACL users: AUTH takes a password alone.
  if (user != "default" &&
      error.find("wrong number of arguments") != std::string::npos)
    return "this Redis knows no ACL users (Redis before 6): give the "
           "password without a user (" +
           error + ")";
  return error;
}

/// A command's error reply, turned into the exception the connection's
/// owner expects; the server's state (LOADING...) stays an outage.
[[noreturn]] void refuse(const std::string& what, const redisReply& r,
                         const char* command, const endpoint& where) {
  auto error = reply_text(r);
  if (server_state_of(error) != server_state::none)
    throw_if_error(r, command, &where);
  // An outage to whoever holds the connection: a relay must not charge its
  // rows an attempt for a password, and a command stops with exit 1.
  throw broker_error(broker_errc::unavailable, what, server_state::none,
                     where.to_string());
}

} // namespace

void connection::introduce() {
  const auto& where = options_.where;
  auto address = "Redis at " + where.to_string();
  const std::string noauth = address +
                             " requires a password (NOAUTH): give it with "
                             "OUTBOX_REDIS_PASSWORD, redis.password_file or a "
                             "redis://USER:PASSWORD@HOST:PORT address";
  bool said_something = false;
  // A user alone is AUTHed too, with an empty password: what an ACL user
  // marked `nopass` takes.
  if (!options_.password.empty() || !options_.username.empty()) {
    std::vector<std::string> auth{"AUTH"};
    auto user =
        options_.username.empty() ? std::string{"default"} : options_.username;
    if (!options_.username.empty())
      auth.push_back(options_.username);
    auth.push_back(options_.password);
    auto r = send(auth);
    if (r->type == REDIS_REPLY_ERROR) {
      auto why = options_.password.empty()
                     ? "no password was given for it (OUTBOX_REDIS_PASSWORD, "
                       "redis.password_file, redis.password or the --redis "
                       "URI)"
                     : auth_refusal(reply_text(*r), user);
      refuse(address + " refused user \"" + user + "\": " + why, *r, "AUTH",
             where);
    }
    said_something = true;
  }
  if (options_.db != 0) {
    auto r = send({"SELECT", std::to_string(options_.db)});
    if (r->type == REDIS_REPLY_ERROR) {
      auto error = reply_text(*r);
      if (starts_with(error, "NOAUTH"))
        refuse(noauth, *r, "SELECT", where);
      refuse(address + " has no logical database " +
                 std::to_string(options_.db) + " (" + error +
                 "): redis.db must be below its `databases` setting (16 by "
                 "default; a cluster has database 0 only)",
             *r, "SELECT", where);
    }
    said_something = true;
  }
  if (said_something)
    return;
  // Neither is due: a PING names a server that wants a password, or a port
  // where something else listens, now rather than at the first command.
  auto r = send({"PING"});
  if (r->type != REDIS_REPLY_ERROR)
    return;
  auto error = reply_text(*r);
  if (starts_with(error, "NOAUTH"))
    refuse(noauth, *r, "PING", where);
  // Any other refusal leaves a usable connection: a server state (LOADING
  // while it replays its AOF) is met again by the first command, whose
  // owner knows what to do with it (a relay waits, a command says so), and
  // a PING renamed away or denied by an ACL says nothing about the rest.
}

} // namespace outbox::broker
