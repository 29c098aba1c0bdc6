#include "broker/lua_script.hpp"

#include "broker/broker_error.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

namespace {

bool is_noscript(const redisReply& r) {
  return r.type == REDIS_REPLY_ERROR &&
         reply_text(r).compare(0, 8, "NOSCRIPT") == 0;
}

} // namespace

void lua_script::load(connection& conn) {
  auto r = conn.command({"SCRIPT", "LOAD", source_});
  sha_ = reply_text(*r);
}

reply lua_script::run(connection& conn, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args) {
  return run(conn, keys, {}, args.begin(), args.end());
}

reply lua_script::run(connection& conn, const std::vector<std::string>& keys,
                      const std::vector<std::string>& leading,
                      std::vector<std::string>::const_iterator first,
                      std::vector<std::string>::const_iterator last) {
  if (sha_.empty())
    load(conn);
  // A one-command pipeline returns NOSCRIPT as a reply instead of throwing.
  std::vector<std::vector<std::string>> call(1);
  auto& argv = call.front();
  argv.reserve(3 + keys.size() + leading.size() +
               static_cast<std::size_t>(last - first));
  argv.emplace_back("EVALSHA");
  argv.emplace_back(sha_);
  argv.emplace_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), leading.begin(), leading.end());
  argv.insert(argv.end(), first, last);
  auto replies = conn.pipeline(call);
  if (is_noscript(*replies.front())) {
    load(conn);
    argv[1] = sha_;
    replies = conn.pipeline(call);
  }
  throw_if_error(*replies.front(), "a Lua script", &conn.options().where);
  return std::move(replies.front());
}

} // namespace outbox::broker
