#include "broker/connection.hpp"

#include "broker/broker_error.hpp"
#include "broker/reliable_queue.hpp"
#include "support/redis_server.hpp"
#include "tests/broker/outage_message.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <chrono>

using namespace outbox::broker;
using outbox::test::outage_message;
using outbox::test::redis_fixture;
using outbox::test::redis_server;

namespace {

using BrokerConnection = redis_fixture;

} // namespace

TEST(BrokerEndpoint, ParsesHostAndPort) {
  auto e = parse_endpoint("127.0.0.1:6390");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 6390);
  EXPECT_EQ(e->to_string(), "127.0.0.1:6390");
  auto named = parse_endpoint("redis.local:1");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->host, "redis.local");
  auto v6 = parse_endpoint("[::1]:6379");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
}

TEST(BrokerEndpoint, RejectsMalformed) {
  for (auto text : {"", "localhost", ":6379", "host:", "host:0", "host:65536",
                    "host:-1", "host:12ab", "host: 12"})
    EXPECT_FALSE(parse_endpoint(text)) << text;
}

TEST_F(BrokerConnection, CommandsAreBinarySafe) {
  std::string value("a\0b\r\nc", 6);
  conn().command({"SET", std::string("k\0ey", 4), value});
  auto r = conn().command({"GET", std::string("k\0ey", 4)});
  EXPECT_EQ(reply_text(*r), value);
}

TEST_F(BrokerConnection, ErrorReplyThrowsRejectedAndConnectionStaysUsable) {
  conn().command({"SET", "text", "x"});
  try {
    conn().command({"LPUSH", "text", "y"});
    FAIL() << "no error";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.reason(), refusal_reason::wrong_type) << e.what();
  }
  EXPECT_EQ(reply_text(*conn().command({"PING"})), "PONG");
}

TEST_F(BrokerConnection, PipelineReturnsRepliesInOrderWithErrors) {
  conn().command({"SET", "text", "x"});
  auto replies = conn().pipeline(
      {{"RPUSH", "l", "a"}, {"LPUSH", "text", "y"}, {"RPUSH", "l", "b"}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0]->integer, 1);
  EXPECT_EQ(replies[1]->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(replies[2]->integer, 2);
  EXPECT_TRUE(conn().pipeline({}).empty());
}

TEST_F(BrokerConnection, BlockingCommandMayOutlastTheIoTimeout) {
  auto options = server_->connection_options();
  options.io_timeout_ms = 100;
  connection short_io{options};
  reliable_queue queue{short_io};
  auto start = std::chrono::steady_clock::now();
  // Blocks 300 ms in Redis, longer than the 100 ms I/O timeout.
  EXPECT_FALSE(queue.pop("empty", "processing", 300));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  // Still the same, healthy context: the normal timeout was restored.
  EXPECT_EQ(reply_text(*short_io.command({"PING"})), "PONG");
}

TEST(BrokerConnectionDown,
     UnreachableRedisIsUnavailableQuicklyWithClearMessage) {
  connection_options options;
  options.where.port = outbox::test::free_loopback_port();
  options.connect_timeout_ms = 500;
  connection conn{options};
  auto start = std::chrono::steady_clock::now();
  auto message = outage_message([&] { conn.command({"PING"}); });
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(1500));
  EXPECT_EQ(message, "cannot reach Redis at 127.0.0.1:" +
                         std::to_string(options.where.port) +
                         ": Connection refused");
  // Every call tries again, and fails the same way.
  EXPECT_EQ(outage_message([&] { conn.ensure_connected(); }), message);
  EXPECT_EQ(outage_message([&] { conn.pipeline({{"PING"}}); }), message);
}

TEST(BrokerConnectionDown, SameConnectionWorksAgainAfterRedisRestarts) {
  redis_server server;
  auto options = server.connection_options();
  options.io_timeout_ms = 200;
  connection conn{options};
  conn.command({"SET", "k", "v"});
  server.kill();
  // The open context now points at a dead server: the call fails and the
  // context is dropped.
  auto lost = outage_message([&] { conn.command({"PING"}); });
  EXPECT_THAT(lost, testing::HasSubstr(server.endpoint().to_string()));
  // Nothing listens: a fresh connect is refused.
  auto refused = outage_message([&] { conn.command({"PING"}); });
  EXPECT_NE(
      refused.find("cannot reach Redis at " + server.endpoint().to_string()),
      std::string::npos)
      << refused;
  server.start();
  EXPECT_EQ(reply_text(*conn.command({"PING"})), "PONG");
  // The fresh context has the I/O timeout too: a reply slower than 200 ms
  // (BLPOP sent as a plain command blocks 2 s) is cut off, not waited for.
  auto start = std::chrono::steady_clock::now();
  auto timed_out = outage_message([&] {
    conn.command({"BLPOP", "empty", "2"});
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(1500))
      << timed_out;
  EXPECT_THAT(timed_out,
              testing::HasSubstr("no reply within the I/O timeout (200 ms)"));
  EXPECT_EQ(reply_text(*conn.command({"PING"})), "PONG");
}
