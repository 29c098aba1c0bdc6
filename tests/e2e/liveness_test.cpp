#include "support/outbox_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <string>
#include <thread>
#include <vector>

// Who is alive, as `outbox status` tells it from the processes' heartbeats:
// a relay process is listed idle or busy, stopped when it stopped, silent
// when it was killed, and `status --check` is unhealthy when rows wait with
// no relay seen or entries wait with nobody consuming, or when the
// consuming process stopped renewing though its lock still holds. The real
// binary, real signals, a SQLite file, a private redis-server.

namespace outbox::test {
namespace {

class E2ELiveness : public ::testing::Test {
protected:
  void SetUp() override {
    // A lease (the notes' life and the consumers' lock) long enough that a
    // killed consumer is seen stale (after half of it, 6 s) for seconds
    // before its lock runs out, however slow the commands in between.
    world_.write_config({{"db", {{"busy_timeout_ms", 1000}}},
                         {"redis", {{"io_timeout_ms", 1000}}},
                         {"lease", {{"ttl_ms", 12000}}},
                         {"run", {{"relays", 2}, {"consumers", 1}}}});
  }

  std::vector<std::string> args(const std::string& command) const {
    return world_.args(command);
  }

  process_result outbox(const std::string& command,
                        std::vector<std::string> flags = {}) const {
    return world_.outbox(command, std::move(flags));
  }

  std::string cwd() const { return world_.dir().path().string(); }

  nlohmann::json status(std::vector<std::string> flags = {}) const {
    flags.push_back("--json");
    auto r = outbox("status", flags);
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  /// Polls `status --json` (bounded) until `holds` is true of it; returns
  /// the last reading.
  nlohmann::json
  status_until(const std::function<bool(const nlohmann::json&)>& holds) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
      last = status();
      if (!last.is_discarded() && holds(last))
        return last;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "status never showed it; last: " << last.dump();
    return last;
  }

  /// Runs `status --check --json` with `flags` (bounded) until it is
  /// unhealthy; returns the last run.
  process_result check_until(std::vector<std::string> flags) const {
    flags.insert(flags.begin(), {"--check", "--json"});
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    process_result last;
    while (std::chrono::steady_clock::now() < deadline) {
      last = outbox("status", flags);
      if (last.exit_code != 0)
        return last;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return last;
  }

  static nlohmann::json relays_of(const nlohmann::json& s) {
    return s.at("redis").at("relay_processes");
  }

  static std::vector<std::string> problems_of(const process_result& checked) {
    auto out = nlohmann::json::parse(checked.out, nullptr, false);
    if (out.is_discarded())
      return {"unparsable: " + checked.out + checked.err};
    return out.at("health").at("problems").get<std::vector<std::string>>();
  }

  void place_order() const {
    auto placed = outbox("place-order", {"--sku", "apple", "--qty", "1"});
    ASSERT_EQ(placed.exit_code, 0) << placed.err;
  }

  outbox_world world_{backend::sqlite, "liveness"};
};

TEST_F(E2ELiveness, ARelayProcessIsListedIdleThenStoppedOrSilent) {
  ASSERT_EQ(outbox("init").exit_code, 0);
  child_process relay{outbox_argv(args("relay")), cwd()};
  ASSERT_TRUE(relay.wait_for_stderr("running; SIGINT or SIGTERM", 30'000));
  // Idle (no row to publish, no lease held), and still listed.
  auto idle = status_until([](const nlohmann::json& s) {
    auto r = relays_of(s);
    return r.size() == 1 && r[0].at("relays") == 2;
  });
  EXPECT_EQ(relays_of(idle)[0].at("state"), "running") << idle.dump();
  EXPECT_TRUE(idle.at("outbox").at("leases").empty());
  auto text = outbox("status");
  EXPECT_THAT(text.out, testing::ContainsRegex("RELAY PROCESS +STATE +RELAYS"));
  EXPECT_THAT(text.out, testing::ContainsRegex(" running +2 "));

  relay.signal(SIGTERM);
  ASSERT_EQ(relay.wait(30'000).exit_code, 0);
  auto stopped = status();
  ASSERT_EQ(relays_of(stopped).size(), 1u) << stopped.dump();
  EXPECT_EQ(relays_of(stopped)[0].at("state"), "stopped");
  EXPECT_EQ(relays_of(stopped)[0].at("relays"), 0);

  // A row waits: healthy while the stop is recent, not past the silence.
  place_order();
  auto recent = outbox("status", {"--check", "--json"});
  EXPECT_TRUE(nlohmann::json::parse(recent.out, nullptr, false).is_object())
      << recent.out << recent.err;
  EXPECT_THAT(problems_of(recent),
              testing::Not(testing::Contains(
                  testing::HasSubstr("no relay was seen running"))));
  auto silent =
      check_until({"--max-relay-silence", "1s", "--max-unpublished-age", "1h"});
  EXPECT_EQ(silent.exit_code, 1) << silent.out;
  EXPECT_THAT(problems_of(silent),
              testing::ElementsAre(testing::ContainsRegex(
                  "1 row waits to be published and no relay was seen "
                  "running for [0-9.ms]+ \\(over 1\\.0s\\)")));

  // A killed relay process stops noting: silent once its note ran out.
  child_process again{outbox_argv(args("relay")), cwd()};
  status_until([](const nlohmann::json& s) {
    return relays_of(s).size() == 2 && relays_of(s)[0].at("state") == "running";
  });
  again.signal(SIGKILL);
  again.wait(30'000);
  auto killed = status_until([](const nlohmann::json& s) {
    for (const auto& p : relays_of(s))
      if (p.at("state") == "silent")
        return true;
    return false;
  });
  EXPECT_EQ(relays_of(killed).size(), 2u) << killed.dump();
}

TEST_F(E2ELiveness, RowsWaitingWithNoRelayEverSeenAreUnhealthy) {
  place_order();
  auto checked = outbox("status", {"--check", "--json"});
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_THAT(problems_of(checked),
              testing::ElementsAre(testing::HasSubstr(
                  "no relay process has been seen: start `outbox relay`")));
  auto alone = outbox("status", {"--max-relay-silence", "1s"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_THAT(alone.err, testing::HasSubstr("only applies with --check"));
}

TEST_F(E2ELiveness, AKilledConsumingProcessIsStaleThenEntriesWaitForNobody) {
  place_order();
  ASSERT_EQ(outbox("relay", {"--until-drained"}).exit_code, 0);
  child_process consume{outbox_argv(args("consume")), cwd()};
  status_until([](const nlohmann::json& s) {
    auto c = s.at("redis").at("consumer_processes");
    return c.size() == 1 && c[0].at("role") == "consuming" &&
           s.at("redis").at("processed") == 1;
  });
  consume.signal(SIGKILL);
  consume.wait(30'000);
  // Something to consume, for nobody.
  place_order();
  ASSERT_EQ(outbox("relay", {"--until-drained"}).exit_code, 0);

  // Its lock still holds, its heartbeat is stale.
  auto stale = status_until([](const nlohmann::json& s) {
    auto c = s.at("redis").at("consumer_processes");
    return c.size() == 1 && c[0].at("stale") == true;
  });
  auto checked = outbox("status", {"--check", "--json"});
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_THAT(problems_of(checked), testing::Contains(testing::HasSubstr(
                                        "the consuming process " +
                                        stale.at("redis")
                                            .at("consumer_processes")[0]
                                            .at("process")
                                            .get<std::string>() +
                                        " was last seen ")));
  EXPECT_THAT(outbox("status").out, testing::HasSubstr("consuming (stale)"));

  // Once its lock ran out: nobody consumes what waits.
  status_until([](const nlohmann::json& s) {
    return s.at("redis").at("consumer_processes").empty() &&
           s.at("redis").at("consumers_lock").is_null();
  });
  // Waiting for less than --max-consumer-silence: a restart, perhaps.
  auto restarting = outbox("status", {"--check", "--json"});
  EXPECT_EQ(restarting.exit_code, 0) << restarting.out;
  auto nobody = check_until({"--max-consumer-silence", "1s"});
  EXPECT_EQ(nobody.exit_code, 1);
  EXPECT_THAT(problems_of(nobody),
              testing::ElementsAre(testing::ContainsRegex(
                  "1 entry waits in the queues, the oldest for [0-9.ms]+ "
                  "\\(over 1\\.0s\\), and no consuming process is "
                  "alive")));
}

} // namespace
} // namespace outbox::test
