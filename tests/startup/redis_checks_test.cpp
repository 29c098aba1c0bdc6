// The start-up checks that ask Redis (startup/redis_preflight.hpp,
// startup/effects_preflight.hpp), on a private redis-server, asserted on
// their verdicts: what stops a start, of which kind, with which words, and
// what is said on the way. The binary's side (the same words on stderr, the
// exit codes) is CliPartitions', CliRedisSettings' and the Fault suites'.

#include "broker/connection.hpp"
#include "config/settings.hpp"
#include "startup/effects_preflight.hpp"
#include "startup/redis_preflight.hpp"
#include "support/temp_dir.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace outbox::test {
namespace {

using startup::outcome;
using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::StartsWith;

class StartupRedisChecks : public redis_fixture {
protected:
  /// The settings of a process on the suite's Redis, names prefixed as the
  /// commands have them.
  config::settings settings() const {
    config::settings s;
    s.redis = conn_->options();
    config::apply_key_prefix(s);
    return s;
  }

  /// A Lua effects file in the test's folder.
  std::string effects_file(const std::string& text) {
    auto path = dir_.file("effects.lua");
    std::ofstream{path} << text;
    return path;
  }

  temp_dir dir_{"outbox-startup"};
};

TEST_F(StartupRedisChecks, TheFirstPartitionCountIsRecordedAndAnotherRefused) {
  auto s = settings();
  s.broker.partitions = 4;
  auto first = startup::check_partitions(conn(), s);
  EXPECT_EQ(first.result, outcome::go);
  EXPECT_TRUE(first.remarks.empty());
  EXPECT_EQ(broker::reply_text(
                *conn().command({"GET", s.broker.partitions_record()})),
            "4");
  EXPECT_EQ(startup::check_partitions(conn(), s).result, outcome::go);

  s.broker.partitions = 2;
  auto second = startup::check_partitions(conn(), s);
  EXPECT_EQ(second.result, outcome::refused_usage);
  EXPECT_THAT(second.refusal,
              StartsWith("broker.partitions is 2 here, but 4 is recorded in "
                         "Redis (" +
                         s.broker.partitions_record() + ") by the first "));
  EXPECT_THAT(second.refusal, HasSubstr("then start them with the new count"));
}

TEST_F(StartupRedisChecks, ARedisThatTakesEveryCommandLetsTheStartGo) {
  auto judged = startup::check_commands(conn(), settings());
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_TRUE(judged.remarks.empty());
  // The private servers keep nothing: said, not refused.
  auto settings_judged = startup::check_redis_settings(conn(), settings());
  EXPECT_EQ(settings_judged.result, outcome::go);
  EXPECT_THAT(settings_judged.warnings(),
              ElementsAre(StartsWith("Redis has no persistence")));
}

TEST_F(StartupRedisChecks, AnAclWithoutACommandIsRefusedAsUsageNamingTheUser) {
  redis_server acl{{false,
                    {},
                    {"user app on >secret ~* &* +@all -evalsha"},
                    "app",
                    "secret"}};
  auto s = settings();
  s.redis = acl.connection_options();
  broker::connection conn{s.redis};
  auto judged = startup::check_commands(conn, s);
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_THAT(judged.refusal,
              StartsWith("Redis at " + acl.endpoint().to_string() +
                         " refuses user \"app\" commands this run needs "
                         "(not an outage: fix the ACL or the proxy): "));
  EXPECT_THAT(judged.refusal, HasSubstr("EVALSHA"));
}

TEST_F(StartupRedisChecks, AProcessWithoutConsumersChecksNoEffects) {
  auto s = settings();
  s.run.consumers = 0;
  s.consumer.effects_lua = effects_file("not Lua at all");
  s.consumer.unknown_types = "dead-letter";
  broker::inbox_options inbox;
  auto judged = startup::consumer_inbox_options(conn(), s, inbox);
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_TRUE(judged.remarks.empty());
  EXPECT_EQ(inbox.unknown, broker::unknown_types::dead_letter);
  EXPECT_FALSE(inbox.effects.has_value());
}

TEST_F(StartupRedisChecks, TheBuiltInEffectsAreSaidInTheLog) {
  auto s = settings();
  broker::inbox_options inbox;
  auto judged = startup::consumer_inbox_options(conn(), s, inbox);
  EXPECT_EQ(judged.result, outcome::go);
  ASSERT_EQ(judged.remarks.size(), 1u);
  EXPECT_EQ(judged.remarks[0].said_as, startup::remark::level::info);
  EXPECT_EQ(judged.remarks[0].text,
            "effects of OrderPlaced from builtin:orders (effects/orders.lua), "
            "keys under pipeline:effects:");
  EXPECT_FALSE(inbox.effects.has_value());
}

TEST_F(StartupRedisChecks, AnEffectsFileLuaRefusesIsRefusedNamingItsLine) {
  auto s = settings();
  s.consumer.effects_lua =
      effects_file("local e = {}\nfunction e.A(\nreturn e");
  broker::inbox_options inbox;
  auto judged = startup::consumer_inbox_options(conn(), s, inbox);
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_THAT(judged.refusal, StartsWith("consumer.effects_lua: " +
                                         s.consumer.effects_lua + ":3: "));
}

TEST_F(StartupRedisChecks, EffectsWithoutOrderPlacedOnAReservingKeyspaceWarn) {
  auto s = settings();
  conn().command({"HSET", s.broker.reserved, "apple", "2"});
  s.consumer.effects_lua =
      effects_file("return {InvoiceIssued = function(store, event) end}");
  broker::inbox_options inbox;
  auto judged = startup::consumer_inbox_options(conn(), s, inbox);
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_THAT(judged.warnings(),
              ElementsAre("consumer.effects_lua " + s.consumer.effects_lua +
                          " gives OrderPlaced no effect, so the reservation "
                          "in " +
                          s.broker.reserved +
                          " stops growing; copy effects/orders.lua's "
                          "function into " +
                          s.consumer.effects_lua + " to keep it"));
  // The warning first, then what runs.
  ASSERT_EQ(judged.remarks.size(), 2u);
  EXPECT_EQ(judged.remarks[1].text, "effects of InvoiceIssued from " +
                                        s.consumer.effects_lua +
                                        ", keys under pipeline:effects:");
  EXPECT_THAT(inbox.known_types, Contains("InvoiceIssued"));

  s.consumer.effects_lua = "";
  judged = startup::consumer_inbox_options(conn(), s, inbox);
  EXPECT_THAT(judged.warnings(),
              ElementsAre(HasSubstr("\"\" (no effects) gives OrderPlaced no "
                                    "effect")));
  EXPECT_EQ(inbox.effects, "");
}

} // namespace
} // namespace outbox::test
