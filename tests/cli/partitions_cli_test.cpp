#include "tests/cli/redis_guard_fixture.hpp"

#include "tests/cli/status_tables.hpp"

#include <csignal>
#include <gmock/gmock.h>
#include <string>
#include <vector>

// broker.partitions recorded in Redis by the first relay or consumer
// process: a process with another count refuses to start (exit 2), a
// writer-only process and the lab are not concerned, status shows it.

namespace outbox::test {
namespace {

using CliPartitions = redis_guard_fixture;

TEST_F(CliPartitions, ASecondProcessWithAnotherCountExitsTwoNamingBoth) {
  start_redis();
  ASSERT_EQ(outbox_r({"init"}).exit_code, 0);
  auto none = json_of(outbox_r({"status", "--json"}));
  EXPECT_TRUE(none.at("redis").at("partitions").at("recorded").is_null())
      << none;

  // The first process runs on (a rolling deploy starts the next meanwhile).
  child_process first{
      outbox_argv({"run", "--relays", "1", "--consumers", "1", "--partitions",
                   "4", "--db", db_path(), "--redis", redis_address()}),
      dir_.path().string()};
  ASSERT_TRUE(first.wait_for_stderr("SIGTERM stops it", 30'000));

  auto second = outbox_r(short_run({"--partitions", "2"}));
  EXPECT_EQ(second.exit_code, 2) << second.out << second.err;
  for (const char* mention :
       {"broker.partitions is 2 here, but 4 is recorded in Redis "
        "(pipeline:outbox.events.partitions)",
        "drain the queues", "DEL pipeline:outbox.events.partitions", "Use 4"})
    EXPECT_THAT(second.err, testing::HasSubstr(mention))
        << "stderr does not name '" << mention << "': " << second.err;
  // Consumers only, or relays only: the same refusal.
  EXPECT_EQ(outbox_r({"run", "--relays", "0", "--consumers", "1",
                      "--partitions", "8", "--until-drained"})
                .exit_code,
            2);
  // The recorded count starts (relays only: the first process holds the
  // consumers' lock).
  auto same = outbox_r({"run", "--relays", "1", "--consumers", "0", "--orders",
                        "2", "--partitions", "4", "--until-drained"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;

  first.signal(SIGTERM);
  auto stopped = first.wait(30'000);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;

  auto status = json_of(outbox_r({"status", "--json"}));
  auto partitions = status.at("redis").at("partitions");
  EXPECT_EQ(partitions.at("recorded"), 4) << partitions;
  EXPECT_EQ(partitions.at("configured"), 4) << partitions;
  EXPECT_EQ(partitions.at("key"), "pipeline:outbox.events.partitions");
  auto text = outbox_r({"status"});
  EXPECT_EQ(row_of(table_titled(text.out, "REDIS SETTING"), "partitions").at(1),
            "4 (recorded in pipeline:outbox.events.partitions)")
      << text.out;
}

TEST_F(CliPartitions, AWriterOnlyProcessNeitherRecordsNorIsRefused) {
  start_redis();
  auto writer =
      outbox_r({"run", "--relays", "0", "--consumers", "0", "--orders", "3",
                "--partitions", "2", "--until-drained"});
  EXPECT_EQ(writer.exit_code, 0) << writer.out << writer.err;
  EXPECT_TRUE(json_of(outbox_r({"status", "--json"}))
                  .at("redis")
                  .at("partitions")
                  .at("recorded")
                  .is_null());

  ASSERT_EQ(outbox_r(short_run({"--partitions", "4"})).exit_code, 0);
  EXPECT_EQ(outbox_r({"run", "--relays", "0", "--consumers", "0", "--orders",
                      "1", "--partitions", "2", "--until-drained"})
                .exit_code,
            0);
}

TEST_F(CliPartitions, StatusNamesAMismatchAndTheLabIgnoresTheRecord) {
  start_redis();
  ASSERT_EQ(outbox_r(short_run({"--partitions", "2"})).exit_code, 0);
  // A config with the default 4 sees the recorded 2.
  auto text = outbox_r({"status"});
  auto row = row_of(table_titled(text.out, "REDIS SETTING"), "partitions");
  ASSERT_EQ(row.size(), 2u) << text.out;
  EXPECT_EQ(row[1].rfind(
                "2 recorded in pipeline:outbox.events.partitions; this config "
                "says 4",
                0),
            0u)
      << row[1];

  // The lab always uses its single list: the record neither stops it nor
  // changes.
  auto lab =
      run_outbox({"lab", "--dir", dir_.file("lab"), "--redis", redis_address()},
                 dir_.path().string(), 60'000);
  EXPECT_EQ(lab.exit_code, 0) << lab.out << lab.err;
  auto status = json_of(outbox_r({"status", "--json"}));
  EXPECT_EQ(status.at("redis").at("partitions").at("recorded"), 2);
}

} // namespace
} // namespace outbox::test
