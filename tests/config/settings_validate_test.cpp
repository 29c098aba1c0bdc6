#include "config/settings.hpp"

#include "tests/config/settings_checks.hpp"

#include <gtest/gtest.h>

#include <string>

// The rules between keys (validate) and how a config error reads.

namespace outbox::config {
namespace {

TEST(ConfigValidate, ChecksValuesSetInCode) {
  // Flags change settings after the file: validate sees them.
  settings s;
  s.redis.where.port = 0;
  auto e = error_from([&] { validate(s); });
  EXPECT_EQ(e.key(), "redis.port");
  s = settings{};
  s.db.synchronous = "normal"; // not normalised: only the loader does that
  EXPECT_THROW(validate(s), config_error);
}

TEST(ConfigValidate, ConsumeLimitAtLeastThePublishingLimit) {
  settings s;
  s.broker.max_entry_bytes = 4u << 20;
  s.broker.max_consume_bytes = 4u << 20;
  EXPECT_NO_THROW(validate(s)) << "equal is enough";
  s.broker.max_consume_bytes = (4u << 20) - 1;
  auto e = error_from([&] { validate(s); });
  EXPECT_EQ(e.key(), "broker.max_consume_bytes");
  EXPECT_NE(std::string{e.what()}.find(
                "must be at least broker.max_entry_bytes (4194304), got "
                "4194303"),
            std::string::npos)
      << e.what();
}

TEST(ConfigValidate, TtlNeedNotExceedTheIdlePollCap) {
  // Only the poll interval bounds the ttl (see validate.cpp): an idle relay
  // holds no lease.
  auto s = apply_json(R"({"db": {"busy_timeout_ms": 100},
                         "redis": {"io_timeout_ms": 300},
                         "lease": {"ttl_ms": 500},
                         "run": {"poll_interval_ms": 100,
                                 "idle_poll_max_ms": 2000}})",
                      "test");
  EXPECT_NO_THROW(validate(s));
}

TEST(ConfigValidate, TtlJustAboveBothStoreTimeoutsAndThreeRenewals) {
  // 300 = three renewals of the consumers' lock; 299 = 49 + 250.
  auto s = apply_json(R"({"db": {"busy_timeout_ms": 49},
                         "redis": {"io_timeout_ms": 250},
                         "lease": {"ttl_ms": 300},
                         "run": {"poll_interval_ms": 10}})",
                      "test");
  EXPECT_NO_THROW(validate(s));
  s.db.busy_timeout_ms = 50; // 300 = 50 + 250: not more
  EXPECT_THROW(validate(s), config_error);
  s.lease.ttl = 301;
  EXPECT_NO_THROW(validate(s));
}

TEST(ConfigValidate, TheLockTtlRuleNamesEveryKeyAndValue) {
  settings s;
  s.lease.ttl = 100;
  s.run.poll_interval_ms = 10;
  auto renewals = error_from([&] { validate(s); });
  EXPECT_EQ(renewals.key(), "lease.ttl_ms");
  EXPECT_STREQ(renewals.what(),
               "lease.ttl_ms: must be at least 300 (three "
               "renewals of the consumers' lock, every 100 ms), "
               "got 100");
  s.lease.ttl = 2000;
  s.db.busy_timeout_ms = 1500;
  s.redis.io_timeout_ms = 600;
  std::string what = error_from([&] { validate(s); }).what();
  EXPECT_EQ(what.rfind("lease.ttl_ms: must be greater than "
                       "db.busy_timeout_ms (1500) + redis.io_timeout_ms "
                       "(600) = 2100, got 2000",
                       0),
            0u)
      << what;
}

TEST(ConfigErrors, NameTheOriginFile) {
  auto e = error_from(
      [&] { apply_json(R"({"lease": {"batch": "x"}})", "my/config.json"); });
  EXPECT_EQ(e.key(), "lease.batch");
  EXPECT_STREQ(e.what(), "lease.batch: expected an integer, got string, in "
                         "my/config.json");
}

TEST(ConfigErrors, SuggestTheClosestKey) {
  auto e =
      error_from([&] { apply_json(R"({"lease": {"ttl": 5000}})", "test"); });
  EXPECT_EQ(e.key(), "lease.ttl");
  EXPECT_NE(std::string(e.what()).find(
                "lease.ttl: unknown key (did you mean lease.ttl_ms?)"),
            std::string::npos)
      << e.what();
}

TEST(ConfigErrors, TheRetiredReservationKeySaysWhereTheHashWent) {
  auto e = error_from([&] {
    apply_json(R"({"broker": {"reserved": "inventory.reserved"}})", "test");
  });
  EXPECT_EQ(e.key(), "broker.reserved");
  EXPECT_NE(std::string(e.what()).find("effects:inventory.reserved"),
            std::string::npos)
      << e.what();
}

TEST(ConfigErrors, APipelineKeyUnderTheEffectsPrefixIsRefused) {
  // Effects may write any key under "<prefix>effects:".
  auto e = error_from([&] {
    auto s =
        apply_json(R"({"broker": {"counters": "effects:counters"}})", "test");
    outbox::config::validate(s);
  });
  EXPECT_EQ(e.key(), "broker.counters");
}

} // namespace
} // namespace outbox::config
