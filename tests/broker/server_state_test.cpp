#include "broker/server_state.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/lua_script.hpp"
#include "broker/publisher.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

// A Redis that answers with its own state (a replica after a failover, a
// full one, one loading its AOF) is unavailable for now, not refusing the
// command: callers wait instead of charging rows an attempt.

using namespace outbox::broker;
using outbox::test::redis_server;

namespace {

TEST(BrokerServerState, ErrorCodesNameTheServersState) {
  EXPECT_EQ(server_state_of("READONLY You can't write against a read only "
                            "replica."),
            server_state::read_only);
  EXPECT_EQ(server_state_of("OOM command not allowed when used memory > "
                            "'maxmemory'. script: 1f0e, on @user_script:1."),
            server_state::out_of_memory);
  EXPECT_EQ(server_state_of("LOADING Redis is loading the dataset in memory"),
            server_state::loading);
  EXPECT_EQ(server_state_of("NOREPLICAS Not enough good replicas to write."),
            server_state::no_replicas);
  EXPECT_EQ(server_state_of("CLUSTERDOWN The cluster is down"),
            server_state::cluster_down);
  EXPECT_EQ(server_state_of("MISCONF Redis is configured to save RDB "
                            "snapshots, but it's currently unable to persist"),
            server_state::cannot_persist);
  EXPECT_EQ(server_state_of("MASTERDOWN Link with MASTER is down"),
            server_state::master_down);
  EXPECT_EQ(server_state_of("UNBLOCKED force unblock from blocking operation, "
                            "instance state changed (master -> replica?)"),
            server_state::unblocked);
  EXPECT_EQ(server_state_of("BUSY Redis is busy running a script"),
            server_state::busy);
  EXPECT_EQ(server_state_of("TRYAGAIN Multiple keys request during rehashing"),
            server_state::try_again);
  // About the command or its keys: a refusal.
  EXPECT_EQ(server_state_of("WRONGTYPE Operation against a key holding the "
                            "wrong kind of value"),
            server_state::none);
  EXPECT_EQ(server_state_of("ERR hash value is not an integer"),
            server_state::none);
  EXPECT_EQ(server_state_of("OOMPH not a code we know"), server_state::none);
  EXPECT_EQ(server_state_of(""), server_state::none);
}

/// The call's error as thrown, for a command on `conn`.
broker_error error_of(connection& conn, const std::vector<std::string>& argv) {
  try {
    conn.command(argv);
  } catch (const broker_error& e) {
    return e;
  }
  throw std::runtime_error("the command succeeded");
}

/// Waits (bounded) until `conn`'s server has synced with its primary, so
/// it answers as a replica (READONLY), not as one loading (LOADING).
bool synced(connection& conn) {
  for (int i = 0; i < 500; ++i) {
    auto info = reply_text(*conn.command({"INFO", "replication"}));
    if (info.find("master_link_status:up") != std::string::npos)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(BrokerServerState, AReplicaIsUnavailableForCommandsScriptsAndPublishes) {
  redis_server primary;
  redis_server replica;
  connection conn{replica.connection_options()};
  conn.command(
      {"REPLICAOF", "127.0.0.1", std::to_string(primary.endpoint().port)});
  ASSERT_TRUE(synced(conn)) << "the replica never synced";

  auto e = error_of(conn, {"RPUSH", "q", "x"});
  EXPECT_EQ(e.code(), broker_errc::unavailable) << e.what();
  EXPECT_EQ(e.state(), server_state::read_only);
  EXPECT_EQ(e.where(), replica.endpoint().to_string());
  EXPECT_NE(
      std::string(e.what()).find("Redis at " + replica.endpoint().to_string()),
      std::string::npos)
      << e.what();

  // A script's write keeps the error code.
  lua_script script{"return redis.call('RPUSH', KEYS[1], 'x')"};
  try {
    script.run(conn, {"q"}, {});
    FAIL() << "a replica took a script's write";
  } catch (const broker_error& err) {
    EXPECT_EQ(err.code(), broker_errc::unavailable) << err.what();
    EXPECT_EQ(err.state(), server_state::read_only);
  }

  // So does a publish, to one list or several.
  keys names;
  names.partitions = 4;
  publisher pub{conn, names};
  std::vector<event_entry> entries;
  for (int i = 0; i < 8; ++i)
    entries.push_back({"e" + std::to_string(i), "order-" + std::to_string(i), 1,
                       "OrderPaid", "{}", 0, 0});
  for (auto batch : {std::vector<event_entry>{entries.front()}, entries}) {
    try {
      pub.publish(batch);
      FAIL() << "a replica took a publish";
    } catch (const broker_error& err) {
      EXPECT_EQ(err.code(), broker_errc::unavailable) << err.what();
      EXPECT_EQ(err.state(), server_state::read_only) << err.what();
    }
  }

  // Promoted, it takes writes again.
  conn.command({"REPLICAOF", "NO", "ONE"});
  EXPECT_NO_THROW(pub.publish(entries));
}

TEST(BrokerServerState, AFullRedisIsUnavailable) {
  redis_server server;
  connection conn{server.connection_options()};
  conn.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  conn.command({"CONFIG", "SET", "maxmemory", "1"});
  auto e = error_of(conn, {"RPUSH", "q", "x"});
  EXPECT_EQ(e.code(), broker_errc::unavailable) << e.what();
  EXPECT_EQ(e.state(), server_state::out_of_memory);
  conn.command({"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_NO_THROW(conn.command({"RPUSH", "q", "x"}));
}

} // namespace
