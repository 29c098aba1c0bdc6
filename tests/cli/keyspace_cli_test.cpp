// The pipeline's Redis keyspace: under broker.key_prefix ("pipeline:") it
// never meets the lab's seed names, and its owner stamp names the database
// it belongs to, so a second database pointed at it is told whose it is
// instead of reading its queues and dedup records as its own (and calling
// the difference loss).

#include "broker/connection.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

class CliKeyspace : public ::testing::Test {
protected:
  /// outbox `args` on database `db` (a file in the test's folder) and the
  /// test's Redis.
  process_result outbox(std::vector<std::string> args, const std::string& db,
                        const std::vector<std::string>& extra = {}) {
    args.insert(args.end(), {"--db", dir_.file(db), "--redis",
                             redis_.endpoint().to_string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_outbox(args, dir_.path().string(), 120'000);
  }

  /// init, then a bounded run that places and drains `orders` orders.
  void pipeline_run(const std::string& db, int orders,
                    const std::vector<std::string>& extra = {}) {
    auto init = outbox({"init"}, db, extra);
    ASSERT_EQ(init.exit_code, 0) << init.err;
    auto run = outbox({"run", "--relays", "1", "--consumers", "1", "--orders",
                       std::to_string(orders), "--until-drained"},
                      db, extra);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  }

  std::string identity_of(const std::string& db) {
    SQLite::Database file{dir_.file(db)};
    return file.execAndGet("SELECT id FROM database_identity").getString();
  }

  long long number(const std::vector<std::string>& command) {
    auto r = conn_.command(command);
    return r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  }

  std::string text(const std::vector<std::string>& command) {
    auto r = conn_.command(command);
    return r->type == REDIS_REPLY_STRING ? std::string{r->str, r->len} : "";
  }

  static bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  temp_dir dir_{"outbox-keyspace"};
  redis_server redis_;
  broker::connection conn_{redis_.connection_options()};
};

TEST_F(CliKeyspace, TheLabAfterAPipelineRunLeavesItsVerifyPassing) {
  pipeline_run("app.db", 20);
  auto before = outbox({"verify", "--json"}, "app.db");
  ASSERT_EQ(before.exit_code, 0) << before.out << before.err;
  auto events = number({"HLEN", "pipeline:processed"});
  EXPECT_GE(events, 20);
  EXPECT_EQ(number({"EXISTS", "processed"}), 0);

  auto lab = run_outbox({"lab", "--dir", dir_.file("lab"), "--redis",
                         redis_.endpoint().to_string()},
                        dir_.path().string(), 120'000);
  ASSERT_EQ(lab.exit_code, 0) << lab.out << lab.err;
  // The lab kept the seed's names, and left the pipeline's keys alone.
  EXPECT_GT(number({"HLEN", "processed"}), 0);
  EXPECT_EQ(number({"HLEN", "pipeline:processed"}), events);

  auto after = outbox({"verify"}, "app.db");
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_FALSE(has(after.out, "not processed")) << after.out;
}

TEST_F(CliKeyspace, TheFirstRunStampsTheKeyspaceWithTheDatabase) {
  pipeline_run("app.db", 3);
  EXPECT_EQ(text({"HGET", "pipeline:outbox.owner", "id"}),
            identity_of("app.db"));
  EXPECT_EQ(text({"HGET", "pipeline:outbox.owner", "path"}),
            dir_.file("app.db"));
  EXPECT_EQ(identity_of("app.db").size(), 32u);
}

TEST_F(CliKeyspace, ASecondDatabaseIsToldWhoseKeyspaceItIs) {
  pipeline_run("first.db", 10);
  auto processed = number({"HLEN", "pipeline:processed"});
  auto second_init = outbox({"init"}, "second.db");
  ASSERT_EQ(second_init.exit_code, 0) << second_init.err;
  auto order = outbox(
      {"place-order", "--sku", "apple", "--qty", "1", "--request-id", "r-1"},
      "second.db");
  ASSERT_EQ(order.exit_code, 0) << order.err;

  const std::string owner = "this Redis keyspace belongs to another "
                            "database (id " +
                            identity_of("first.db") + ", path " +
                            dir_.file("first.db") + ")";
  const std::vector<std::vector<std::string>> commands = {
      {"status"},
      {"status", "--json"},
      {"verify"},
      {"verify", "--json"},
      {"dead-letters"},
      {"run", "--relays", "1", "--consumers", "1", "--until-drained"}};
  for (const auto& command : commands) {
    auto r = outbox(command, "second.db");
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "outbox " + command[0] + ": " + owner))
        << command[0] << ": " << r.err;
    EXPECT_FALSE(has(r.out + r.err, "not processed")) << r.out;
  }
  // Nothing of the second database went into the first's keyspace.
  SQLite::Database second{dir_.file("second.db")};
  EXPECT_EQ(second
                .execAndGet("SELECT COUNT(*) FROM outbox WHERE status = "
                            "'PENDING'")
                .getInt(),
            1);
  EXPECT_EQ(number({"HLEN", "pipeline:processed"}), processed);
  auto first = outbox({"verify"}, "first.db");
  EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
  // Its own keyspace under another prefix is the way out.
  std::ofstream{dir_.file("second.json")}
      << R"({"broker": {"key_prefix": "second:"}})";
  auto own = outbox({"run", "--relays", "1", "--consumers", "1",
                     "--until-drained", "--config", dir_.file("second.json")},
                    "second.db");
  EXPECT_EQ(own.exit_code, 0) << own.out << own.err;
  EXPECT_EQ(number({"HLEN", "second:processed"}), 1);
  // Or the flag, without a file (docs/postgres.md).
  auto third_init = outbox({"init"}, "third.db");
  ASSERT_EQ(third_init.exit_code, 0) << third_init.err;
  auto third = outbox({"run", "--relays", "1", "--consumers", "1", "--orders",
                       "3", "--followup-share", "0", "--until-drained",
                       "--key-prefix", "third:"},
                      "third.db");
  EXPECT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_EQ(number({"HLEN", "third:processed"}), 3);
  auto verified = outbox({"verify", "--key-prefix", "third:"}, "third.db");
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_EQ(outbox({"verify"}, "third.db").exit_code, 2)
      << "without the flag, the first database's keyspace";
}

TEST_F(CliKeyspace, AnUpgradedDatabaseIsToldWhereItsOldKeysAre) {
  auto init = outbox({"init"}, "old.db");
  ASSERT_EQ(init.exit_code, 0) << init.err;
  {
    // As the previous version left it: schema 4, no identity.
    SQLite::Database db{dir_.file("old.db"), SQLite::OPEN_READWRITE};
    db.exec("DROP TABLE database_identity; PRAGMA user_version = 4");
  }
  // ... and Redis as its relays left it, under the plain names.
  conn_.command({"SET", "outbox.events.partitions", "4"});
  conn_.command({"RPUSH", "outbox.events.1", "{}"});
  auto upgrade = outbox({"init"}, "old.db");
  ASSERT_EQ(upgrade.exit_code, 0) << upgrade.err;

  for (const char* command : {"status", "verify", "run"}) {
    auto r = outbox({command}, "old.db");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "outbox.events.partitions exists")) << r.err;
    EXPECT_TRUE(has(r.err, "set \"key_prefix\": \"\"")) << r.err;
  }
  EXPECT_EQ(number({"LLEN", "outbox.events.1"}), 1);
  EXPECT_EQ(number({"EXISTS", "pipeline:outbox.owner"}), 0);

  // The way the message gives: the plain names again.
  std::ofstream{dir_.file("plain.json")} << R"({"broker": {"key_prefix": ""}})";
  auto status =
      outbox({"status"}, "old.db", {"--config", dir_.file("plain.json")});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_TRUE(has(status.out, "outbox.events.1")) << status.out;

  // A database this version created has no old keys to look for.
  auto fresh = outbox({"init"}, "fresh.db");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  auto fresh_status = outbox({"status"}, "fresh.db");
  EXPECT_EQ(fresh_status.exit_code, 0) << fresh_status.err;
}

TEST_F(CliKeyspace, TheLabLeavesAPipelineOnTheSeedNamesAlone) {
  std::ofstream{dir_.file("plain.json")} << R"({"broker": {"key_prefix": ""}})";
  pipeline_run("app.db", 3, {"--config", dir_.file("plain.json")});
  auto processed = number({"HLEN", "processed"});
  ASSERT_GE(processed, 3);
  auto lab = run_outbox({"lab", "--dir", dir_.file("lab"), "--step", "init",
                         "--redis", redis_.endpoint().to_string()},
                        dir_.path().string());
  EXPECT_EQ(lab.exit_code, 2) << lab.out << lab.err;
  EXPECT_TRUE(has(lab.err, "the lab deletes those keys")) << lab.err;
  EXPECT_EQ(number({"HLEN", "processed"}), processed);
}

} // namespace
} // namespace outbox::test
