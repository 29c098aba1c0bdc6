#include "broker/connection.hpp"

#include "broker/broker_error.hpp"
#include "broker/fence.hpp"

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <sys/time.h>

namespace outbox::broker {

namespace {

timeval to_timeval(int ms) {
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

void ignore_sigpipe_once() {
  static std::once_flag flag;
  // A write to a Redis that went away must fail with EPIPE, not kill us.
  std::call_once(flag, [] { std::signal(SIGPIPE, SIG_IGN); });
}

/// Keeps the argument pointers and lengths hiredis wants alive for a call.
struct argv_view {
  explicit argv_view(const std::vector<std::string>& argv) {
    data.reserve(argv.size());
    sizes.reserve(argv.size());
    for (auto& arg : argv) {
      data.push_back(arg.data());
      sizes.push_back(arg.size());
    }
  }
  std::vector<const char*> data;
  std::vector<size_t> sizes;
};

} // namespace

void reply_deleter::operator()(redisReply* r) const {
  freeReplyObject(r);
}

void context_deleter::operator()(redisContext* c) const {
  redisFree(c);
}

connection::connection(connection_options options)
    : options_(std::move(options)) {}

connection::~connection() {
  reset();
}

void connection::reset() {
  context_.reset();
}

void connection::ensure_connected() {
  context();
}

redisContext* connection::context() {
  if (context_ != nullptr)
    return context_.get();
  ignore_sigpipe_once();
  if (options_.sentinel)
    follow_master();
  auto where = options_.where.to_string();
  std::unique_ptr<redisContext, context_deleter> c{
      redisConnectWithTimeout(options_.where.host.c_str(), options_.where.port,
                              to_timeval(options_.connect_timeout_ms))};
  if (c == nullptr)
    throw broker_error(broker_errc::unavailable,
                       "cannot reach Redis at " + where +
                           ": cannot allocate a context");
  if (c->err != 0) {
    std::string reason = c->errstr;
    // Debug only: the connection's owner knows what the outage means and
    // reports it once; every retry would repeat this line.
    spdlog::debug("redis {}: cannot connect: {}", where, reason);
    throw broker_error(broker_errc::unavailable,
                       "cannot reach Redis at " + where + ": " + reason);
  }
  // The connect timeout does not bound reads and writes: set that apart.
  if (redisSetTimeout(c.get(), to_timeval(options_.io_timeout_ms)) !=
      REDIS_OK) {
    std::string reason = c->errstr;
    throw broker_error(broker_errc::unavailable,
                       "cannot set the I/O timeout for Redis at " + where +
                           ": " + reason);
  }
  context_ = std::move(c);
  try {
    introduce();
    if (options_.sentinel)
      confirm_master();
  } catch (...) {
    reset();
    throw;
  }
  spdlog::debug("redis {}: connected", where);
  return context_.get();
}

void connection::fail(const std::string& what) {
  std::string reason = "no reply";
  if (context_ != nullptr && context_->err == REDIS_ERR_PROTOCOL) {
    // Something else answers on the port (a web server's "HTTP/1.1 400",
    // an SSH banner): say that, not hiredis' "got "H" as reply type byte".
    reason = context_->errstr;
    reset();
    spdlog::debug("redis {}: not Redis: {}", options_.where.to_string(),
                  reason);
    throw broker_error(broker_errc::unavailable,
                       options_.where.to_string() +
                           " does not speak the Redis protocol (" + reason +
                           "): is another service listening there?");
  }
  if (context_ != nullptr && context_->err != 0) {
    reason = context_->errstr;
    // hiredis reports an expired socket timeout as EAGAIN's text.
    if (context_->err == REDIS_ERR_IO && reason == std::strerror(EAGAIN))
      reason = "no reply within the I/O timeout (" +
               std::to_string(options_.io_timeout_ms) + " ms)";
  }
  reset();
  spdlog::debug("redis {}: connection dropped {}: {}",
                options_.where.to_string(), what, reason);
  throw broker_error(broker_errc::unavailable,
                     "Redis at " + options_.where.to_string() + " failed " +
                         what + ": " + reason);
}

reply connection::command(const std::vector<std::string>& argv) {
  auto r = send(argv);
  forget_master_on(*r);
  throw_if_error(*r, argv.empty() ? "" : argv.front().c_str(), &options_.where);
  return r;
}

namespace {

/// Slack for a blocking command's reply beyond its own timeout.
constexpr int blocking_reply_slack_ms = 1000;

} // namespace

reply connection::blocking_command(const std::vector<std::string>& argv,
                                   int wait_ms) {
  auto* c = context();
  // hiredis drops the context when a read times out, so the read timeout
  // must outlast the time Redis may legitimately block. Redis checks blocked
  // clients' timeouts in its cron (every 100 ms at the default hz), so the
  // reply can come late: allow a second on top of the I/O timeout.
  auto raised =
      to_timeval(wait_ms + options_.io_timeout_ms + blocking_reply_slack_ms);
  if (redisSetTimeout(c, raised) != REDIS_OK)
    fail("setting a timeout");
  auto r = send(argv);
  if (redisSetTimeout(c, to_timeval(options_.io_timeout_ms)) != REDIS_OK)
    fail("setting a timeout");
  forget_master_on(*r);
  throw_if_error(*r, argv.empty() ? "" : argv.front().c_str(), &options_.where);
  return r;
}

reply connection::send(const std::vector<std::string>& argv) {
  auto* c = context();
  argv_view args{argv};
  reply r{static_cast<redisReply*>(redisCommandArgv(
      c, static_cast<int>(argv.size()), args.data.data(), args.sizes.data()))};
  if (r == nullptr || c->err != 0)
    fail("during " + (argv.empty() ? std::string{"a command"} : argv.front()));
  return r;
}

std::vector<reply>
connection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  std::vector<reply> replies;
  if (commands.empty())
    return replies;
  auto* c = context();
  for (auto& argv : commands) {
    argv_view args{argv};
    if (redisAppendCommandArgv(c, static_cast<int>(argv.size()),
                               args.data.data(), args.sizes.data()) != REDIS_OK)
      fail("while queueing a pipeline");
  }
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    auto status = redisGetReply(c, &raw);
    reply r{static_cast<redisReply*>(raw)};
    if (status != REDIS_OK || r == nullptr)
      fail("during a pipeline");
    replies.push_back(std::move(r));
  }
  // After every reply is read: the context must not go with replies unread.
  for (const auto& r : replies)
    forget_master_on(*r);
  return replies;
}

std::string reply_text(const redisReply& r) {
  switch (r.type) {
  case REDIS_REPLY_STRING:
  case REDIS_REPLY_STATUS:
  case REDIS_REPLY_ERROR:
    return std::string(r.str, r.len);
  default:
    return {};
  }
}

void throw_if_error(const redisReply& r, const char* context,
                    const endpoint* where) {
  if (r.type != REDIS_REPLY_ERROR)
    return;
  auto error = reply_text(r);
  std::string address = where != nullptr ? where->to_string() : "";
  std::string what = address.empty() ? "Redis" : "Redis at " + address;
  what += " rejected ";
  what += (context != nullptr && *context != '\0') ? context : "a command";
  what += ": ";
  what += error;
  if (error.rfind(fenced_error_prefix, 0) == 0)
    throw broker_error(broker_errc::fenced, what);
  // A state of the server is nothing to do with the command: callers treat
  // it as an outage (retry later), never as a refusal (charge an attempt).
  auto state = server_state_of(error);
  auto reason = refusal_reason_of(error);
  throw broker_error(state == server_state::none ? broker_errc::rejected
                                                 : broker_errc::unavailable,
                     what, state, std::move(address), std::move(error), reason);
}

} // namespace outbox::broker
