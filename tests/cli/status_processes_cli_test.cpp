#include "tests/cli/audit_fixture.hpp"
#include "tests/cli/status_tables.hpp"

#include <gmock/gmock.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

// `outbox status` names the processes at work: relays holding leases (and
// whether their process is gone), the consuming process and the standbys.

namespace outbox::test {
namespace {

using CliStatusProcesses = CliAudit;

std::string this_host() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return host;
}

TEST_F(CliStatusProcesses, RowsOfADeadRelayWaitForTheirLeases) {
  place("apple", 2);
  place("pear", 1);
  // A relay of a process of this host that has exited (reaped: its pid is
  // free), its rows left SENDING for a minute.
  child_process gone{{"/bin/true"}};
  auto dead_pid = gone.pid();
  ASSERT_EQ(gone.wait(10'000).exit_code, 0);
  auto owner = "relay-" + this_host() + "-" + std::to_string(dead_pid) + "-0-0";
  claim_all(owner, 60'000);

  auto r = outbox_r({"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  const auto& leases = out.at("outbox").at("leases");
  ASSERT_EQ(leases.size(), 1u) << r.out;
  EXPECT_EQ(leases[0].at("owner"), owner);
  EXPECT_EQ(leases[0].at("rows"), 2);
  EXPECT_EQ(leases[0].at("process"), "gone");
  EXPECT_GT(leases[0].at("expires_in_ms").get<std::int64_t>(), 50'000);
  EXPECT_LT(leases[0].at("last_claim_age_ms").get<std::int64_t>(), 10'000);

  auto text = outbox_r({"status"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto table = table_titled(text.out, "LEASE OWNER (RELAY)");
  expect_aligned(table);
  auto row = row_of(table, owner);
  ASSERT_EQ(row.size(), 6u) << text.out;
  EXPECT_EQ(row[1], "2");
  EXPECT_EQ(row[4], "gone");
  EXPECT_EQ(row[5].rfind("their leases to expire: all in 5", 0), 0u) << row[5];
  EXPECT_THAT(row[5], testing::HasSubstr("(the relay is gone)"));
}

TEST_F(CliStatusProcesses, RowsOfARunningRelayWaitForItsAck) {
  place("apple", 2);
  auto owner =
      "relay-" + this_host() + "-" + std::to_string(::getpid()) + "-1-0";
  claim_all(owner, 60'000);
  auto out = json_of(outbox_r({"status", "--json"}));
  EXPECT_TRUE(out.at("outbox").at("leases")[0].at("process").is_null());
  auto text = outbox_r({"status"});
  auto row = row_of(table_titled(text.out, "LEASE OWNER (RELAY)"), owner);
  ASSERT_EQ(row.size(), 6u) << text.out;
  EXPECT_EQ(row[4], "-");
  EXPECT_EQ(
      row[5].rfind("the relay's ack, or their leases to expire: all in ", 0),
      0u)
      << row[5];
}

TEST_F(CliStatusProcesses, ListsTheConsumingProcessAndItsStandby) {
  auto consumer = [this] {
    return std::make_unique<child_process>(
        outbox_argv({"run", "--relays", "0", "--consumers", "1", "--log-level",
                     "info", "--db", db_path(), "--redis",
                     redis_.endpoint().to_string()}),
        dir_.path().string());
  };
  auto first = consumer();
  ASSERT_TRUE(first->wait_for_stderr("consuming the queues", 20'000))
      << first->wait(5'000).err;
  auto second = consumer();
  ASSERT_TRUE(second->wait_for_stderr("standby", 20'000))
      << second->wait(5'000).err;

  auto r = outbox_r({"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  const auto& processes = out.at("redis").at("consumer_processes");
  ASSERT_EQ(processes.size(), 2u) << r.out;
  EXPECT_EQ(processes[0].at("role"), "consuming");
  EXPECT_EQ(processes[1].at("role"), "standby");
  auto holder =
      out.at("redis").at("consumers_lock").at("holder").get<std::string>();
  EXPECT_EQ(holder.substr(0, holder.rfind('#')), processes[0].at("process"));
  // <host>-<pid>.<start>@<start ms> (cli::process_name).
  auto pid_of = [](const std::string& process) {
    auto dot = process.rfind('.', process.rfind('@'));
    auto dash = process.rfind('-', dot);
    return process.substr(dash + 1, dot - dash - 1);
  };
  EXPECT_EQ(pid_of(processes[0].at("process")), std::to_string(first->pid()));
  EXPECT_EQ(pid_of(processes[1].at("process")), std::to_string(second->pid()));
  for (const auto& p : processes) {
    EXPECT_GE(p.at("for_ms").get<std::int64_t>(), 0);
    EXPECT_GT(p.at("expires_in_ms").get<std::int64_t>(), 0);
    EXPECT_GE(p.at("seen_ago_ms").get<std::int64_t>(), 0);
    EXPECT_FALSE(p.at("stale").get<bool>());
  }

  auto text = outbox_r({"status"});
  auto table = table_titled(text.out, "CONSUMER PROCESS");
  ASSERT_EQ(table.size(), 3u) << text.out;
  expect_aligned(table);
  auto standby = row_of(table, processes[1].at("process"));
  ASSERT_EQ(standby.size(), 5u) << text.out;
  EXPECT_EQ(standby[1], "standby");
  EXPECT_THAT(standby[3], testing::EndsWith("ms ago"))
      << "renewed many times a second";
  EXPECT_EQ(standby[4], "-") << "a standby holds no lock";

  // A standby that stops takes its note with it.
  second->signal(SIGTERM);
  EXPECT_EQ(second->wait(30'000).exit_code, 0);
  auto after = json_of(outbox_r({"status", "--json"}));
  const auto& left = after.at("redis").at("consumer_processes");
  ASSERT_EQ(left.size(), 1u) << after.dump();
  EXPECT_EQ(left[0].at("role"), "consuming");
  first->signal(SIGTERM);
  EXPECT_EQ(first->wait(30'000).exit_code, 0);
  auto none = json_of(outbox_r({"status", "--json"}));
  EXPECT_TRUE(none.at("redis").at("consumer_processes").empty()) << none.dump();
}

} // namespace
} // namespace outbox::test
