// `outbox bench --soak`: a relay process and a consumer process, each
// sampled from outside over every event, and the soak's target.

#include "bench/results.hpp"
#include "bench/targets.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

namespace outbox::bench {
namespace {

std::map<std::string, double> values_of(const nlohmann::json& report) {
  std::map<std::string, double> values;
  for (const auto& m : report.at("measurements"))
    values[m.at("name").get<std::string>()] = m.at("value").get<double>();
  return values;
}

TEST(BenchSoak, ARelayAndAConsumerProcessAreSampledOverEveryEvent) {
  test::redis_server redis;
  test::temp_dir dir{"outbox-bench-soak"};
  // At the tiny scale memory is read every 5 ms: 20k events give each
  // process's second half enough readings to be measured.
  auto r = test::run_outbox({"bench", "--tiny", "--soak", "20000", "--json",
                             "--db", dir.file("o.db"), "--redis",
                             redis.endpoint().to_string()},
                            dir.path().string(), 240'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  ASSERT_TRUE(report.at("ok").get<bool>()) << report.at("errors").dump();
  EXPECT_EQ(report.at("scale").at("soak_events"), 20000);
  auto values = values_of(report);
  for (std::string role : {"relay", "consumer"}) {
    auto id = "soak_" + role + "_";
    for (const char* figure :
         {"rss_half", "rss_end", "rss_peak", "rss_growth", "cpu"})
      ASSERT_EQ(values.count(id + figure), 1u) << id + figure;
    // Read from a live outbox process: a few MiB at least (the program
    // itself, CAF's threads, a connection), not a missing reading's 0.
    EXPECT_GT(values[id + "rss_half"], 2) << role;
    // The peak is the kernel's high-water mark, read apart from the
    // samples: it covers them.
    EXPECT_GE(values[id + "rss_peak"], values[id + "rss_end"]) << role;
    EXPECT_GE(values[id + "rss_peak"], values[id + "rss_half"]) << role;
    EXPECT_GT(values[id + "cpu"], 0) << role;
  }
  // Only the soak ran: no other stage's figures.
  EXPECT_EQ(values.count("relay_1"), 0u);
  EXPECT_EQ(values.count("end_to_end_orders"), 0u);
  for (const auto& t : report.at("targets")) {
    bool soak = t.at("name") == "soak_rss_growth";
    EXPECT_EQ(t.at("measured").get<bool>(), soak) << t;
    if (!soak) {
      EXPECT_EQ(t.at("why"), "a soak run measures memory only") << t;
    }
  }
}

TEST(BenchSoak, OutsideASoakRunItsTargetIsNotMeasured) {
  results r;
  r.add({"soak", "soak_relay_rss_growth", "relay", 50, "MiB", ""});
  r.add({"soak", "soak_consumer_rss_growth", "consumer", 1, "MiB", ""});
  nlohmann::json soak{{"scale", {{"soak_events", 5'000'000}}}};
  results in_soak = r;
  check_targets(in_soak, soak, {});
  nlohmann::json regular{{"scale", {{"soak_events", 0}}}};
  results outside = r;
  check_targets(outside, regular, {});
  auto target_of = [](const results& checked, const nlohmann::json& context) {
    auto report = checked.to_json(context);
    for (const auto& t : report.at("targets"))
      if (t.at("name") == "soak_rss_growth")
        return t;
    return nlohmann::json{};
  };
  auto t = target_of(in_soak, soak);
  EXPECT_TRUE(t.at("measured").get<bool>());
  EXPECT_EQ(t.at("value"), 50); // the larger of the two processes' growth
  EXPECT_FALSE(t.at("met").get<bool>());
  t = target_of(outside, regular);
  EXPECT_FALSE(t.at("measured").get<bool>());
  EXPECT_THAT(t.at("why").get<std::string>(),
              testing::HasSubstr("outbox bench --soak"));
}

TEST(BenchSoak, TooFewEventsOrWithQuickIsAUsageError) {
  for (const char* events : {"10", "0", "-5"}) {
    auto r =
        test::run_outbox({"bench", "--soak", events, "--redis", "127.0.0.1:1"});
    EXPECT_EQ(r.exit_code, 2) << events << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(std::string{"outbox bench: --soak "} +
                                          events + ": give at least 1000"));
  }
  auto r = test::run_outbox(
      {"bench", "--soak", "5000", "--quick", "--redis", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("--soak and --quick"));
}

// A run too short for its second half to be read often enough fails,
// rather than report a growth of nothing from one reading.
TEST(BenchSoak, ASoakTooShortToReadItsSecondHalfFails) {
  test::redis_server redis;
  test::temp_dir dir{"outbox-bench-soak"};
  auto r = test::run_outbox({"bench", "--soak", "1000", "--json", "--db",
                             dir.file("o.db"), "--redis",
                             redis.endpoint().to_string()},
                            dir.path().string(), 240'000);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("too few to tell growth: give more "
                                        "events"));
}

} // namespace
} // namespace outbox::bench
