#include "support/redis_server.hpp"

#include "broker/connection.hpp"
#include "broker/publisher.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <filesystem>
#include <signal.h>
#include <sys/wait.h>

using namespace outbox::broker;
using outbox::test::redis_server;

TEST(BrokerRedisServer, StartsOnPrivatePortAndReapsOnDestruction) {
  pid_t pid = -1;
  std::string dir;
  {
    redis_server server;
    pid = server.pid();
    dir = server.dir();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(server.endpoint().host, "127.0.0.1");
    EXPECT_GT(server.endpoint().port, 0);
    connection conn{server.connection_options()};
    EXPECT_EQ(reply_text(*conn.command({"PING"})), "PONG");
    EXPECT_TRUE(std::filesystem::is_directory(dir));
  }
  // Reaped: no child with that pid any more (not even a zombie).
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(BrokerRedisServer, TwoServersAreIndependent) {
  redis_server one;
  redis_server two;
  EXPECT_NE(one.endpoint().port, two.endpoint().port);
  connection a{one.connection_options()};
  connection b{two.connection_options()};
  a.command({"SET", "k", "one"});
  EXPECT_EQ(b.command({"GET", "k"})->type, REDIS_REPLY_NIL);
}

TEST(BrokerRedisServer, StopIsGracefulAndStartKeepsThePort) {
  redis_server server;
  auto port = server.endpoint().port;
  server.stop();
  EXPECT_FALSE(server.running());
  server.start();
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.endpoint().port, port);
  connection conn{server.connection_options()};
  EXPECT_EQ(reply_text(*conn.command({"PING"})), "PONG");
}

// What a relay acknowledged must survive a Redis crash when AOF is on
// (README, guarantee 2 "No loss"): the fault tests rely on this fixture option.
TEST(BrokerRedisServer, AofKeepsPublishedEntriesAcrossKill) {
  redis_server server{redis_server::options{true}};
  connection conn{server.connection_options()};
  publisher pub{conn, keys{}};
  pub.publish_encoded("outbox.events", {"a", "b", "c"});
  server.kill();
  server.start();
  // A new connection: the old context died with the server (its next call
  // would fail once, see BrokerConnectionDown).
  connection after{server.connection_options()};
  auto length = after.command({"LLEN", "outbox.events"});
  EXPECT_EQ(length->integer, 3);
}

TEST(BrokerRedisServer, WithoutAofAKillLosesData) {
  redis_server server;
  connection conn{server.connection_options()};
  conn.command({"SET", "k", "v"});
  server.kill();
  server.start();
  connection after{server.connection_options()};
  EXPECT_EQ(after.command({"EXISTS", "k"})->integer, 0);
}
