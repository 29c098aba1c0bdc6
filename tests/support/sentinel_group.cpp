#include "support/sentinel_group.hpp"

#include "broker/broker_error.hpp"

#include <hiredis/hiredis.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>

namespace outbox::test {

namespace {

constexpr int deadline_ms = 30'000;

/// Polls `done` every 50 ms until it holds; throws naming `what` after
/// deadline_ms. (What it waits for happens in other processes, on their
/// own timers: there is no event of ours to wait on.)
void wait_for(const std::function<bool()>& done, const std::string& what) {
  auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds{deadline_ms};
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("timed out waiting for " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
}

broker::connection_options direct(const broker::endpoint& where) {
  broker::connection_options options;
  options.where = where;
  options.connect_timeout_ms = 500;
  options.io_timeout_ms = 2000;
  return options;
}

/// A command's reply at `where`, or null when it could not be sent.
broker::reply ask(const broker::endpoint& where,
                  const std::vector<std::string>& argv) {
  try {
    broker::connection conn{direct(where)};
    return std::move(conn.pipeline({argv}).front());
  } catch (const broker::broker_error&) {
    return nullptr;
  }
}

/// True when the sentinel at `where` lists the replica at `port` as up.
bool knows_replica(const broker::endpoint& where, const std::string& name,
                   int port) {
  auto r = ask(where, {"SENTINEL", "REPLICAS", name});
  if (!r || r->type != REDIS_REPLY_ARRAY)
    return false;
  for (std::size_t i = 0; i < r->elements; ++i) {
    const auto& fields = *r->element[i];
    std::string seen_port, flags;
    for (std::size_t f = 0; f + 1 < fields.elements; f += 2) {
      auto key = broker::reply_text(*fields.element[f]);
      if (key == "port")
        seen_port = broker::reply_text(*fields.element[f + 1]);
      if (key == "flags")
        flags = broker::reply_text(*fields.element[f + 1]);
    }
    if (seen_port == std::to_string(port) && flags == "slave")
      return true;
  }
  return false;
}

} // namespace

std::string role_of(const broker::endpoint& where) {
  auto r = ask(where, {"ROLE"});
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0)
    return {};
  return broker::reply_text(*r->element[0]);
}

sentinel_group::sentinel_group(std::string master_name)
    : name_(std::move(master_name)) {
  master_ = std::make_unique<redis_server>();
  auto at = master_->endpoint();
  redis_server::options replica;
  replica.extra_args = {"--replicaof", at.host, std::to_string(at.port)};
  replica_ = std::make_unique<redis_server>(replica);
  wait_for(
      [&] {
        auto r = ask(replica_->endpoint(), {"INFO", "replication"});
        return r && broker::reply_text(*r).find("master_link_status:up") !=
                        std::string::npos;
      },
      "the replica to sync with its master");
  for (int i = 0; i < 3; ++i) {
    redis_server::options sentinel;
    sentinel.sentinel = true;
    sentinel.config_lines = {
        "sentinel monitor " + name_ + " " + at.host + " " +
            std::to_string(at.port) + " 2",
        "sentinel down-after-milliseconds " + name_ + " 1000",
        "sentinel failover-timeout " + name_ + " 5000",
    };
    sentinels_.push_back(std::make_unique<redis_server>(sentinel));
  }
  for (auto& sentinel : sentinels_)
    wait_for(
        [&] {
          return knows_replica(sentinel->endpoint(), name_,
                               replica_->endpoint().port);
        },
        "sentinel " + sentinel->endpoint().to_string() + " to see the replica");
}

broker::sentinel_set sentinel_group::sentinels() const {
  broker::sentinel_set set;
  set.master_name = name_;
  for (const auto& sentinel : sentinels_)
    set.sentinels.push_back(sentinel->endpoint());
  set.timeout_ms = 300;
  return set;
}

broker::connection_options sentinel_group::connection_options() const {
  auto options = direct(master_->endpoint());
  options.sentinel = sentinels();
  return options;
}

std::string sentinel_group::uri() const {
  return sentinel_uri(sentinels());
}

std::string sentinel_uri(const broker::sentinel_set& set) {
  std::string text = "redis-sentinel://";
  for (const auto& sentinel : set.sentinels)
    text += (text.back() == '/' ? "" : ",") + sentinel.to_string();
  return text + "#" + set.master_name;
}

bool sentinel_group::names_master(const broker::endpoint& where) const {
  for (const auto& sentinel : sentinels_) {
    auto r = ask(sentinel->endpoint(),
                 {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name_});
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        broker::reply_text(*r->element[1]) != std::to_string(where.port))
      return false;
  }
  return true;
}

void sentinel_group::wait_until_master(const broker::endpoint& where) {
  wait_for([&] { return names_master(where); },
           "every sentinel to name " + where.to_string() + " master");
}

void sentinel_group::fail_over() {
  auto r = ask(sentinels_.front()->endpoint(), {"SENTINEL", "FAILOVER", name_});
  if (!r || r->type == REDIS_REPLY_ERROR)
    throw std::runtime_error("SENTINEL FAILOVER was refused: " +
                             (r ? broker::reply_text(*r) : "no reply"));
  wait_until_master(replica_->endpoint());
  wait_until_replica(master_->endpoint());
}

void sentinel_group::wait_until_replica(const broker::endpoint& where) {
  wait_for([&] { return role_of(where) == "slave"; },
           where.to_string() + " to become a replica");
}

} // namespace outbox::test
