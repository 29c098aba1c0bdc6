#include "broker/sentinel.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace outbox::broker {

namespace {

std::string joined(const std::vector<std::string>& parts,
                   const char* separator) {
  std::string out;
  for (const auto& part : parts)
    out += (out.empty() ? "" : separator) + part;
  return out;
}

/// The address in a GET-MASTER-ADDR-BY-NAME reply ([host, port]), or
/// nothing when it is not one (read as every HOST:PORT is).
std::optional<endpoint> named_address(const redisReply& r) {
  if (r.type != REDIS_REPLY_ARRAY || r.elements != 2 ||
      r.element[0]->type != REDIS_REPLY_STRING ||
      r.element[1]->type != REDIS_REPLY_STRING)
    return std::nullopt;
  return parse_endpoint(reply_text(*r.element[0]) + ":" +
                        reply_text(*r.element[1]));
}

} // namespace

std::string sentinel_set::to_string() const {
  std::vector<std::string> addresses;
  for (const auto& sentinel : sentinels)
    addresses.push_back(sentinel.to_string());
  return joined(addresses, ", ") + " (master " + master_name + ")";
}

connection_options sentinel_options(const sentinel_set& set,
                                    const endpoint& where) {
  connection_options options;
  options.where = where;
  options.connect_timeout_ms = set.timeout_ms;
  options.io_timeout_ms = set.timeout_ms;
  options.username = set.username;
  options.password = set.password;
  return options;
}

endpoint ask_sentinels(sentinel_set& set) {
  std::vector<std::string> silent, unaware;
  for (std::size_t i = 0; i < set.sentinels.size(); ++i) {
    const auto where = set.sentinels[i];
    connection sentinel{sentinel_options(set, where)};
    reply r;
    try {
      // A pipeline returns an error reply rather than throwing it.
      r = std::move(sentinel
                        .pipeline({{"SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                    set.master_name}})
                        .front());
    } catch (const broker_error& e) {
      // The connection speaks of a Redis: this one is a sentinel.
      std::string why = e.what();
      auto redis = why.find("Redis at ");
      if (redis != std::string::npos)
        why.replace(redis, 5, "sentinel");
      // Its credentials are the sentinels' own, not the master's the
      // handshake's hints name.
      auto hint = why.find(" (NOAUTH): ");
      if (hint != std::string::npos)
        why = why.substr(0, hint) + " (NOAUTH)";
      if (hint != std::string::npos ||
          why.find(" refused user ") != std::string::npos)
        why += " (the sentinels' credentials: redis.sentinel_username, "
               "redis.sentinel_password_file or redis.sentinel_password)";
      silent.push_back(why);
      continue;
    }
    if (r->type == REDIS_REPLY_NIL) {
      unaware.push_back(where.to_string());
      continue;
    }
    if (r->type == REDIS_REPLY_ERROR) {
      // A Redis that is not a sentinel: "ERR unknown command 'SENTINEL'".
      silent.push_back(where.to_string() +
                       " is not a sentinel it seems: " + reply_text(*r));
      continue;
    }
    auto master = named_address(*r);
    if (!master) {
      silent.push_back(where.to_string() +
                       " answered something that is not HOST and PORT");
      continue;
    }
    std::rotate(set.sentinels.begin(), set.sentinels.begin() + i,
                set.sentinels.begin() + i + 1);
    return *master;
  }
  std::string what;
  if (!unaware.empty())
    what = "the sentinel" + std::string{unaware.size() == 1 ? "" : "s"} +
           " at " + joined(unaware, ", ") +
           (unaware.size() == 1 ? " knows" : " know") + " no master named " +
           set.master_name +
           " (redis.master_name, or the #NAME of a redis-sentinel:// "
           "address: `sentinel masters` lists theirs)";
  else
    what = "no sentinel of master " + set.master_name + " answers";
  if (!silent.empty())
    what += (unaware.empty() ? ": " : "; ") + joined(silent, "; ");
  spdlog::debug("redis sentinels: {}", what);
  throw broker_error(broker_errc::unavailable, what);
}

} // namespace outbox::broker
