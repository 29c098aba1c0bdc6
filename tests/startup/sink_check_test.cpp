// A consumer's own database as the start-up check judges it
// (startup/sink_preflight.hpp): settings, the effects file and the sink
// itself, asserted on the verdict and on what it chose. SQLite sinks in a
// temporary folder; no Redis.

#include "config/settings.hpp"
#include "startup/sink_preflight.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace outbox::test {
namespace {

using startup::outcome;
using testing::ElementsAre;
using testing::StartsWith;

class StartupSink : public ::testing::Test {
protected:
  StartupSink() {
    s_.consumer.sink = dir_.file("sink.db");
    s_.consumer.effects_sql = dir_.file("effects.sql");
    std::ofstream{s_.consumer.effects_sql}
        << "-- effect: InvoiceIssued\nSELECT 1\n";
  }

  startup::verdict judge() {
    return startup::consumer_sink_settings(s_, inbox_, chosen_);
  }

  temp_dir dir_{"outbox-startup-sink"};
  config::settings s_;
  broker::inbox_options inbox_;
  std::optional<sink::consumer_sink> chosen_;
};

TEST_F(StartupSink, NoSinkChoosesNothing) {
  s_.consumer.sink = "";
  s_.consumer.effects_sql = "";
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_TRUE(judged.remarks.empty());
  EXPECT_FALSE(chosen_.has_value());
}

TEST_F(StartupSink, EitherSettingWithoutTheOtherIsRefusedAsUsage) {
  auto effects = s_.consumer.effects_sql;
  s_.consumer.effects_sql = "";
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_EQ(judged.refusal, "consumer.sink needs consumer.effects_sql, the "
                            "statements to run there");
  s_.consumer.effects_sql = effects;
  s_.consumer.sink = "";
  judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_EQ(judged.refusal, "consumer.effects_sql needs consumer.sink, the "
                            "database its statements run in");
  // Even for a process without consumers: the settings are wrong anyway.
  s_.run.consumers = 0;
  EXPECT_EQ(judge().result, outcome::refused_usage);
}

TEST_F(StartupSink, AProcessWithoutConsumersOpensNoSink) {
  s_.run.consumers = 0;
  s_.consumer.effects_sql = dir_.file("missing.sql");
  EXPECT_EQ(judge().result, outcome::go);
  EXPECT_FALSE(chosen_.has_value());
}

TEST_F(StartupSink, AnUnreadableFileOrATypeTheLuaEffectsHaveIsRefused) {
  auto effects = s_.consumer.effects_sql;
  s_.consumer.effects_sql = dir_.file("missing.sql");
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_THAT(judged.refusal, StartsWith("consumer.effects_sql: cannot read "));

  s_.consumer.effects_sql = effects;
  inbox_.known_types.push_back("InvoiceIssued");
  judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_EQ(judged.refusal, "consumer.effects_sql: InvoiceIssued also has an "
                            "effect in consumer.effects_lua: give each type "
                            "one");
  EXPECT_FALSE(chosen_.has_value());
}

TEST_F(StartupSink, ASinkWithoutAnInboxTableIsRefusedAsUsage) {
  sink::execute({s_.consumer.sink}, "CREATE TABLE invoices (id TEXT)");
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_THAT(judged.refusal, StartsWith("consumer.sink: "));
}

TEST_F(StartupSink, ASinkThatCannotBeReachedIsRefusedAsAFailure) {
  s_.consumer.sink =
      "postgresql://outbox@127.0.0.1:1/nowhere?connect_timeout=2";
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::refused_failure);
  EXPECT_THAT(judged.refusal, StartsWith("consumer.sink: "));
}

TEST_F(StartupSink, AUsableSinkIsChosenAndItsTypesGoToTheInbox) {
  sink::create_sink_schema({s_.consumer.sink});
  auto judged = judge();
  EXPECT_EQ(judged.result, outcome::go);
  ASSERT_EQ(judged.remarks.size(), 1u);
  EXPECT_EQ(judged.remarks[0].said_as, startup::remark::level::info);
  EXPECT_EQ(judged.remarks[0].text, "effects of InvoiceIssued from " +
                                        s_.consumer.effects_sql + " run in " +
                                        s_.consumer.sink);
  EXPECT_THAT(inbox_.sink_types, ElementsAre("InvoiceIssued"));
  ASSERT_TRUE(chosen_.has_value());
  EXPECT_EQ(chosen_->consumer, s_.key_prefix);
  EXPECT_EQ(chosen_->target.location, s_.consumer.sink);
  EXPECT_EQ(chosen_->target.busy_timeout_ms, s_.db.busy_timeout_ms);
}

} // namespace
} // namespace outbox::test
