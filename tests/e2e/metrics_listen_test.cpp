#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/scrape.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

// `outbox run --metrics-listen HOST:PORT`: the metrics served on the
// address asked for, not only on loopback.

namespace outbox::test {
namespace {

/// An IPv4 address of this machine other than loopback; "" when it has
/// none (a network namespace with only lo).
std::string non_loopback_address() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0)
    return "";
  std::string found;
  for (auto* a = all; a != nullptr && found.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET)
      continue;
    auto addr = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr;
    if ((ntohl(addr.s_addr) >> 24) == 127)
      continue;
    char text[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &addr, text, sizeof text) != nullptr)
      found = text;
  }
  ::freeifaddrs(all);
  return found;
}

/// A port nobody listens on now on any address (the kernel's pick).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  if (fd < 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot pick a free port");
  ::close(fd);
  return ntohs(addr.sin_port);
}

class E2EMetricsListen : public ::testing::Test {
protected:
  std::vector<std::string> run_args(const std::string& listen) const {
    return outbox_argv({"run", "--relays", "0", "--consumers", "1",
                        "--metrics-listen", listen, "--db", dir_.file("app.db"),
                        "--redis", redis_.endpoint().to_string()});
  }

  /// Starts a run serving on `listen`, checks where it says it serves, and
  /// returns it running.
  void expect_served(const std::string& listen,
                     const std::vector<std::string>& reachable_from,
                     const std::vector<std::string>& unreachable_from,
                     int port) {
    child_process run{run_args(listen), dir_.path().string()};
    ASSERT_TRUE(run.wait_for_stderr(
        "outbox run: metrics on http://" + listen + "/metrics", 30'000))
        << run.wait(5'000).err;
    for (const auto& host : reachable_from) {
      auto response = scrape_response(host, port);
      EXPECT_THAT(response, testing::HasSubstr(" 200 "))
          << "no metrics from " << host << ": " << response;
      EXPECT_THAT(response, testing::HasSubstr("outbox_probe_up"));
    }
    for (const auto& host : unreachable_from)
      EXPECT_EQ(scrape_response(host, port), "")
          << "served on " << host << " too";
    run.signal(SIGTERM);
    auto r = run.wait(30'000);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }

  temp_dir dir_{"outbox-metrics-listen"};
  redis_server redis_;
};

TEST_F(E2EMetricsListen, ServesEveryInterfaceOnTheWildcardAddress) {
  int port = free_port();
  std::vector<std::string> hosts{"127.0.0.1"};
  if (auto other = non_loopback_address(); !other.empty())
    hosts.push_back(other);
  expect_served("0.0.0.0:" + std::to_string(port), hosts, {}, port);
}

TEST_F(E2EMetricsListen, ServesOnlyTheAddressAskedFor) {
  auto other = non_loopback_address();
  if (other.empty())
    GTEST_SKIP() << "this machine has no IPv4 address besides loopback";
  int port = free_port();
  expect_served(other + ":" + std::to_string(port), {other}, {"127.0.0.1"},
                port);
}

TEST_F(E2EMetricsListen, RefusesMalformedAddressesBeforeStarting) {
  const std::vector<std::string> bad{
      "8080",        "localhost:9100",  "127.0.0.1:",     "127.0.0.1:0",
      "127.0.0.1:x", "127.0.0.1:65536", "300.1.1.1:9100", "[::1]:9100"};
  for (const auto& value : bad) {
    auto r = run_outbox({"run", "--relays", "0", "--consumers", "1",
                         "--metrics-listen", value, "--db", dir_.file("app.db"),
                         "--redis", redis_.endpoint().to_string()},
                        dir_.path().string(), 30'000);
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("outbox: "));
    EXPECT_THAT(r.err, testing::HasSubstr("--metrics-listen"));
  }
  auto both = run_outbox({"run", "--metrics-port", "9100", "--metrics-listen",
                          "127.0.0.1:9100", "--db", dir_.file("app.db"),
                          "--redis", redis_.endpoint().to_string()},
                         dir_.path().string(), 30'000);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("app.db")))
      << "a refused flag must leave nothing behind";
}

} // namespace
} // namespace outbox::test
