// A Redis under Sentinel named by a redis-sentinel:// address: every
// command finds the master through the sentinels (broker/sentinel.hpp).

#include "support/sentinel_group.hpp"
#include "support/tmux_pane.hpp"
#include "tests/cli/cli_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>

namespace outbox::test {
namespace {

/// redis-sentinel://S1,S2,S3#NAME for `group`, or with another name.
std::string sentinel_address(sentinel_group& group, const std::string& name) {
  auto set = group.sentinels();
  set.master_name = name;
  return sentinel_uri(set);
}

using CliSentinel = cli_fixture;

TEST_F(CliSentinel, ARunVerifyAndStatusFindTheMasterThroughTheSentinels) {
  sentinel_group group;
  auto address = sentinel_address(group, group.master_name());
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  auto run = outbox({"run", "--until-drained", "--orders", "20"},
                    {"--redis", address});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto verify = outbox({"verify"}, {"--redis", address});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  auto status = outbox({"status", "--json"}, {"--redis", address});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  auto connection = nlohmann::json::parse(status.out)["redis"]["connection"];
  EXPECT_EQ(connection["address"], group.first_master().endpoint().to_string());
  EXPECT_EQ(connection["sentinel"]["master_name"], group.master_name());
  EXPECT_EQ(connection["sentinel"]["sentinels"].size(), 3u);
  // What it wrote is on the master the sentinels name.
  broker::connection master{group.first_master().connection_options()};
  EXPECT_GT(master.command({"HLEN", "pipeline:processed"})->integer, 0);
}

TEST_F(CliSentinel, StatusSaysWhenTheMasterLastChanged) {
  sentinel_group group;
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  auto sentinel_view = [&] {
    auto status = outbox({"status", "--json"}, {"--redis", group.uri()});
    EXPECT_EQ(status.exit_code, 0) << status.err;
    return nlohmann::json::parse(status.out)["redis"]["connection"];
  };
  auto before = sentinel_view();
  EXPECT_EQ(before["sentinel"]["failover_epoch"], 0) << before.dump();
  EXPECT_EQ(before["sentinel"]["flags"], "master");
  auto first_since = before["sentinel"]["master_since"].get<std::string>();

  group.fail_over();
  auto after = sentinel_view();
  EXPECT_EQ(after["address"], group.first_replica().endpoint().to_string());
  EXPECT_GE(after["sentinel"]["failover_epoch"].get<int>(), 1) << after.dump();
  // ISO 8601 in UTC compares as text: the promotion came later.
  EXPECT_GT(after["sentinel"]["master_since"].get<std::string>(), first_since)
      << after.dump();

  auto text = outbox({"status"}, {"--redis", group.uri()});
  EXPECT_THAT(text.out, testing::HasSubstr("master since"));
  EXPECT_THAT(text.out, testing::HasSubstr("failover epoch"));
}

/// The REDIS SETTING rows under Sentinel in a real 80-column terminal: a
/// row wider than the pane would wrap into the next.
TEST_F(CliSentinel, StatusRowsFitAnEightyColumnTerminal) {
  sentinel_group group;
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  tmux_pane pane{
      dir_.file("tmux.sock"), 80, 200,
      outbox_argv({"status", "--db", db_path(), "--redis", group.uri()})};
  ASSERT_TRUE(pane.wait_done(60'000));
  std::string all;
  std::vector<std::string> rows;
  for (const auto& row : pane.screen()) {
    all += row + "\n";
    for (const char* label : {"sentinels ", "master name ", "master since "})
      if (row.rfind(label, 0) == 0)
        rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), 3u) << all;
  EXPECT_THAT(rows[0],
              testing::EndsWith(group.sentinel(2).endpoint().to_string()))
      << all;
  EXPECT_THAT(rows[1], testing::EndsWith(group.master_name())) << all;
  EXPECT_THAT(rows[2], testing::EndsWith("(failover epoch 0)")) << all;
  EXPECT_THAT(all, testing::HasSubstr("exit=0"));
}

TEST_F(CliSentinel, AnUnknownMasterOrAnAddressWithoutOneIsNamed) {
  sentinel_group group;
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  auto unknown =
      outbox({"status"}, {"--redis", sentinel_address(group, "nope")});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out << unknown.err;
  // status shows what it could read, and why Redis could not be.
  EXPECT_THAT(unknown.out, testing::HasSubstr("know no master named nope"));
  EXPECT_THAT(unknown.out,
              testing::HasSubstr(group.sentinel(2).endpoint().to_string()));
  auto run = outbox({"run", "--until-drained", "--orders", "1"},
                    {"--redis", sentinel_address(group, "nope")});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.err, testing::HasSubstr("know no master named nope"));
  auto nameless = outbox(
      {"status"}, {"--redis", "redis-sentinel://" +
                                  group.sentinel(0).endpoint().to_string()});
  EXPECT_EQ(nameless.exit_code, 2) << nameless.out << nameless.err;
  EXPECT_THAT(nameless.err, testing::HasSubstr("--redis: a redis-sentinel:// "
                                               "address names the master"));
}

TEST_F(CliSentinel, TheConfigFileNamesTheSentinelsToo) {
  sentinel_group group;
  std::string sentinels;
  for (std::size_t i = 0; i < 3; ++i)
    sentinels += std::string{i == 0 ? "" : ", "} + "\"" +
                 group.sentinel(i).endpoint().to_string() + "\"";
  auto config = write_config(
      "sentinel.json", R"({"redis": {"host": "192.0.2.1", "sentinels": [)" +
                           sentinels + R"(], "master_name": ")" +
                           group.master_name() + R"("}})");
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  auto status = outbox({"status", "--json"}, {"--config", config});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  auto connection = nlohmann::json::parse(status.out)["redis"]["connection"];
  EXPECT_EQ(connection["address"], group.first_master().endpoint().to_string());
  EXPECT_EQ(connection["sentinel"]["master_name"], group.master_name());
}

} // namespace
} // namespace outbox::test
