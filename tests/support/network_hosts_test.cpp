#include "support/network_hosts.hpp"

#include "support/network_commands.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <memory>

namespace outbox::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* redis_cli = "/usr/bin/redis-cli";

/// A redis-server on the bridge's address, where the hosts reach it.
std::unique_ptr<redis_server> redis_on(const host_network& net) {
  redis_server::options opts;
  opts.bind_address = net.address();
  return std::make_unique<redis_server>(opts);
}

std::vector<std::string> redis_cli_in(const host_network& net,
                                      const network_host& host,
                                      const redis_server& server,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> argv{redis_cli, "-h", server.endpoint().host, "-p",
                                std::to_string(server.endpoint().port)};
  argv.insert(argv.end(), args.begin(), args.end());
  return net.command(host, argv);
}

/// What `redis-cli PING` run inside `host` printed (PONG when it got
/// through).
std::string ping_from(const host_network& net, const network_host& host,
                      const redis_server& server) {
  return run_process(redis_cli_in(net, host, server, {"PING"}), "", 10'000).out;
}

/// The TCP sockets of `host` still waiting for an answer to their SYN.
std::string connecting_sockets(const network_host& host) {
  auto listed = run_process(
      {"/usr/bin/ss", "-N", host.netns, "-Htn", "state", "syn-sent"}, "", 5000);
  return listed.out;
}

/// True when a `redis-cli PING` from `host` hangs: its connection shows up
/// in SYN-SENT (the SYN went out unanswered: dropped, not refused) and
/// stays there past the first retransmission (1 s). The client is killed
/// and reaped on return.
bool connect_hangs(const host_network& net, const network_host& host,
                   const redis_server& server) {
  child_process client{redis_cli_in(net, host, server, {"PING"})};
  auto where =
      server.endpoint().host + ":" + std::to_string(server.endpoint().port);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (connecting_sockets(host).find(where) == std::string::npos) {
    // Waiting on the client's exit paces the polling of its socket.
    if (client.exited_within(50) || std::chrono::steady_clock::now() > deadline)
      return false;
  }
  return !client.exited_within(1500);
}

/// What `ip` lists now: namespaces and links.
std::string machine_network_names() {
  return run_ip({"netns", "list"}).out + run_ip({"-o", "link", "show"}).out;
}

/// True when `listing` holds `name` as a whole name ("obx-7-1" is not in
/// "obx-7-12"): nothing of a name's characters on either side.
bool lists(const std::string& listing, const std::string& name) {
  auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
  };
  for (auto at = listing.find(name); at != std::string::npos;
       at = listing.find(name, at + 1)) {
    auto end = at + name.size();
    if ((at == 0 || !part_of_name(listing[at - 1])) &&
        (end == listing.size() || !part_of_name(listing[end])))
      return true;
  }
  return false;
}

class SupportNetworkHosts : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto why = host_network::unavailable_reason(); !why.empty())
      GTEST_SKIP() << why;
  }
};

TEST_F(SupportNetworkHosts, HostReachesServerOnBridgeAddress) {
  host_network net;
  auto host = net.add_host("relay-1");
  auto redis = redis_on(net);
  EXPECT_EQ(ping_from(net, host, *redis), "PONG\n");
  // The server sees the host's own address: the packets left the
  // namespace through its veth and the bridge.
  EXPECT_THAT(
      run_process(redis_cli_in(net, host, *redis, {"CLIENT", "INFO"})).out,
      HasSubstr("addr=" + host.address + ":"));
}

TEST_F(SupportNetworkHosts, ProgramInsideHasTheChildsPidAndIsReapedByIt) {
  host_network net;
  auto host = net.add_host("relay-1");
  child_process program{
      net.command(host, {"/bin/sh", "-c", "echo pid=$$ >&2; exec sleep 30"})};
  // ip exec'd the shell in the child itself: the shell's $$ is its pid.
  ASSERT_TRUE(program.wait_for_stderr(
      "pid=" + std::to_string(program.pid()) + "\n", 5000));
  struct stat inside = {};
  struct stat named = {};
  ASSERT_EQ(
      ::stat(("/proc/" + std::to_string(program.pid()) + "/ns/net").c_str(),
             &inside),
      0);
  ASSERT_EQ(::stat(("/run/netns/" + host.netns).c_str(), &named), 0);
  EXPECT_EQ(inside.st_ino, named.st_ino);

  program.signal(SIGKILL);
  auto result = program.wait(5000);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(run_ip({"netns", "pids", host.netns}).out, "");
}

TEST_F(SupportNetworkHosts, CutHangsOnlyThatPortUntilRestored) {
  host_network net;
  auto host = net.add_host("relay-1");
  auto cut_off = redis_on(net);
  auto still_reached = redis_on(net);
  EXPECT_FALSE(connect_hangs(net, host, *cut_off)); // it can tell
  net.cut(host, net.address(), cut_off->endpoint().port);
  net.cut(host, net.address(), cut_off->endpoint().port); // a no-op
  EXPECT_TRUE(connect_hangs(net, host, *cut_off));
  EXPECT_EQ(ping_from(net, host, *still_reached), "PONG\n");

  net.restore(host);
  EXPECT_EQ(ping_from(net, host, *cut_off), "PONG\n");
  net.restore(host); // a no-op
  EXPECT_EQ(ping_from(net, host, *cut_off), "PONG\n");
}

TEST_F(SupportNetworkHosts, HostsKeepTheirOwnCuts) {
  host_network net;
  auto cut_host = net.add_host("relay-1");
  auto other = net.add_host("relay-2");
  EXPECT_NE(cut_host.address, other.address);
  auto redis = redis_on(net);
  net.cut(cut_host, net.address(), redis->endpoint().port);
  EXPECT_EQ(ping_from(net, other, *redis), "PONG\n");
  net.restore(other); // lifts nothing of relay-1's
  EXPECT_TRUE(connect_hangs(net, cut_host, *redis));
  net.restore(cut_host);
  EXPECT_EQ(ping_from(net, cut_host, *redis), "PONG\n");
}

TEST_F(SupportNetworkHosts, DestructionLeavesNothingBehind) {
  std::vector<std::string> names;
  std::unique_ptr<child_process> survivor;
  {
    host_network net;
    auto one = net.add_host("relay-1");
    auto two = net.add_host("relay-2");
    net.cut(one, net.address(), 9);
    names = {net.bridge(), one.netns, one.link, two.netns, two.link};
    for (const auto& name : names)
      ASSERT_TRUE(lists(machine_network_names(), name)) << name;
    // A process still inside when the network goes.
    survivor = std::make_unique<child_process>(
        net.command(two, {"/bin/sh", "-c", "echo in >&2; exec sleep 30"}));
    ASSERT_TRUE(survivor->wait_for_stderr("in", 5000));
  }
  auto left = machine_network_names();
  for (const auto& name : names)
    EXPECT_FALSE(lists(left, name)) << name << " is left in:\n" << left;
  survivor->signal(SIGKILL);
  EXPECT_EQ(survivor->wait(5000).signal, SIGKILL);
}

/// Namespaces and links named like a run's, removed in the destructor
/// whatever the test saw.
struct planted_leftovers {
  std::vector<std::string> namespaces;
  std::vector<std::string> links;
  ~planted_leftovers() {
    for (const auto& link : links)
      run_ip({"link", "del", link});
    for (const auto& netns : namespaces)
      run_ip({"netns", "del", netns});
  }
};

TEST_F(SupportNetworkHosts, StartRemovesOnlyDeadRunsLeftovers) {
  auto dead = std::to_string(gone_pid());
  auto live = std::to_string(::getpid());
  planted_leftovers planted;
  planted.namespaces = {"obx-" + dead + "-0", "obx-" + live + "-9999"};
  planted.links = {"obx" + dead + "v0", "obx" + live + "x999"};
  for (const auto& netns : planted.namespaces)
    must_ip({"netns", "add", netns});
  must_ip({"link", "add", planted.links[0], "type", "veth", "peer", "name",
           "obx" + dead + "h0"});
  must_ip({"link", "add", planted.links[1], "type", "bridge"});

  host_network net;
  auto left = machine_network_names();
  EXPECT_FALSE(lists(left, planted.namespaces[0])) << left;
  EXPECT_FALSE(lists(left, planted.links[0])) << left;
  EXPECT_FALSE(lists(left, "obx" + dead + "h0")) << left;
  EXPECT_TRUE(lists(left, planted.namespaces[1])) << left;
  EXPECT_TRUE(lists(left, planted.links[1])) << left;
}

} // namespace
} // namespace outbox::test
