// Relays on three machines over one PostgreSQL. Each relay process runs in
// a network namespace of its own (tests/support/network_hosts.hpp), joined
// by a bridge to the servers; the load and the consumers run here. Under
// load, one after the other, the faults a fleet of relay hosts meets:
//   1. a relay process SIGKILLed, then started again on its host;
//   2. a host cut off from PostgreSQL only (Redis still reachable) past
//      the lease, then reconnected;
//   3. a relay process SIGSTOPped past the lease (a zombie), then
//      continued;
//   4. PostgreSQL crashed (immediate shutdown), then started again;
//   5. every outbox session terminated by an administrator.
// The end: nothing lost, no double effect, no order violation, the fence
// refused late acks, and `outbox verify` passes.

#include "support/network_hosts.hpp"
#include "support/pg_server.hpp"
#include "tests/faults/fault_fixture.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

/// The hosts come first: the servers listen on their bridge.
struct relay_hosts {
  relay_hosts() : reason(host_network::unavailable_reason()) {
    if (reason.empty())
      net = std::make_unique<host_network>();
  }
  /// Why namespaces cannot be made here; empty when they can.
  std::string reason;
  std::unique_ptr<host_network> net;
};

redis_server::options redis_on(const relay_hosts& hosts) {
  redis_server::options options;
  if (hosts.net)
    options.bind_address = hosts.net->address();
  return options;
}

/// The lease (fault_fixture's config): each fault lasts several of them.
constexpr int ttl_ms = 500;
constexpr int fault_ms = 4 * ttl_ms;
/// Rows published between two faults: each fault meets a flowing pipeline.
constexpr std::int64_t between_faults = 200;

class FaultSeveralHosts : protected relay_hosts, public fault_fixture {
protected:
  FaultSeveralHosts() : fault_fixture(redis_on(*this)) {}

  void SetUp() override {
    if (!net)
      GTEST_SKIP() << "relay hosts need network namespaces: " << reason;
    pg_server::options options;
    options.listen_addresses = {net->address()};
    options.allowed_networks = {net->subnet()};
    pg_ = std::make_unique<pg_server>(options);
    // Every process, here or on a host, names the bridge's address.
    db_path_ = pg_->uri_for_host(net->address());
    fault_fixture::SetUp();
    for (int i = 1; i <= 3; ++i)
      hosts_.push_back(net->add_host("relay-" + std::to_string(i)));
  }

  /// A relay-only `outbox run` (two relays) on host `i`.
  std::unique_ptr<child_process>
  start_relays(std::size_t i, std::vector<std::string> flags = {}) const {
    flags.insert(flags.begin(), {"--relays", "2", "--consumers", "0"});
    return std::make_unique<child_process>(
        net->command(hosts_.at(i), outbox_argv(run_args(flags, false))),
        dir_.path().string());
  }

  std::int64_t published() const {
    return count("SELECT COUNT(*) FROM outbox WHERE status = 'PUBLISHED'");
  }

  /// Lets the load run until `more` rows more are PUBLISHED (bounded);
  /// false if they never are.
  bool flows(load_waves& load, std::int64_t more, const std::string& after) {
    auto target = published() + more;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (published() < target && std::chrono::steady_clock::now() < deadline)
      load.pump(50);
    if (published() < target) {
      std::cout << "[ hosts    ] nothing flowed after " << after << std::endl;
      return false;
    }
    std::cout << "[ hosts    ] flowing after " << after << std::endl;
    return true;
  }

  std::unique_ptr<pg_server> pg_;
  std::vector<network_host> hosts_;
};

TEST_F(FaultSeveralHosts, RelayHostsRideOutEveryFault) {
  std::vector<std::unique_ptr<child_process>> relays;
  relays.push_back(start_relays(0));
  relays.push_back(start_relays(1));
  // The third host also freezes by itself after half its claims, before
  // the push, past the lease (an injected pause, which skips the relay's
  // own lease checks): late acks the fence must refuse, whatever moments
  // the faults below happen to hit.
  relays.push_back(start_relays(
      2, {"--crash-relay-pause", "0.5", "--seed", std::to_string(seed_)}));
  auto consumers = start_run({"--relays", "0", "--consumers", "2"}, false);
  auto load = waves(300);
  // A wave that starts (or audits) while PostgreSQL is down exits 1: its
  // orders are counted from the database, like every other's.
  load.tolerate_postgres_outages();
  std::int64_t kills = 0;

  ASSERT_TRUE(flows(load, between_faults, "the start"));
  relays[0]->signal(SIGKILL);
  relays[0]->wait(10'000);
  relays[0] = start_relays(0);
  ++kills;
  ASSERT_TRUE(flows(load, between_faults, "a relay host's process was killed"));

  net->cut(hosts_[1], net->address(), pg_->port());
  load.pump(fault_ms);
  net->restore(hosts_[1]);
  ASSERT_TRUE(
      flows(load, between_faults, "a host was cut off from PostgreSQL"));

  relays[2]->signal(SIGSTOP);
  load.pump(fault_ms);
  relays[2]->signal(SIGCONT);
  ASSERT_TRUE(flows(load, between_faults, "a relay process was stopped"));

  pg_->crash();
  load.pump(fault_ms);
  pg_->start();
  ASSERT_TRUE(flows(load, between_faults, "PostgreSQL crashed"));

  // Events flow as soon as one relay host is back; the others reconnect
  // on their own backoff after the crash. Wait (bounded) until the relay
  // hosts, the consumers and the writer each hold a session again, so the
  // terminations below hit every kind of client.
  auto sessions = [&] {
    return database_number(pg_->uri(),
                           "SELECT count(*) FROM pg_stat_activity WHERE "
                           "application_name = 'outbox'");
  };
  auto reconnected =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sessions() < 4 && std::chrono::steady_clock::now() < reconnected)
    load.pump(100);
  auto ended = database_number(
      pg_->uri(), "SELECT count(pg_terminate_backend(pid)) FROM "
                  "pg_stat_activity WHERE application_name = 'outbox'");
  EXPECT_GE(ended, 4) << "relays, consumers and writer each hold a session";
  ASSERT_TRUE(flows(load, between_faults, "the sessions were terminated"));

  auto orders = load.finish(120'000);
  ASSERT_TRUE(wait_until_settled(120'000))
      << "the pipeline did not drain after the faults";
  std::int64_t fenced = 0;
  for (std::size_t i = 0; i < relays.size(); ++i)
    fenced += stop_gracefully(*relays[i], "relays on " + hosts_[i].name)
                  .value("fenced_acks_rejected", std::int64_t{0});
  stop_gracefully(*consumers, "consumers");
  EXPECT_GT(fenced, 0) << "no late ack met the fence";
  std::cout << "[ hosts    ] fenced acks: " << fenced << std::endl;

  auto check = finish("FaultSeveralHosts", kills);
  // At least every order of the waves that ended well; a wave the crash
  // ended may have committed some before it.
  EXPECT_GE(check.figures.orders, orders);
  EXPECT_EQ(check.figures.lost, 0);
  EXPECT_EQ(check.figures.order_violations, 0);
  EXPECT_EQ(check.figures.failed_rows, 0);
  EXPECT_EQ(check.figures.dead_lettered, 0);
}

} // namespace
} // namespace outbox::test
