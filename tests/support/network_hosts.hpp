#pragma once

// Several "hosts" on one machine, for fault scenarios that need relays on
// separate machines: each host is a network namespace joined by a veth
// pair to a bridge in the root namespace, where the servers listen.
//
// How a fault scenario uses it (needs root, which CI is):
//
//   host_network net;                       // first: it outlives the rest
//   redis_server::options r;
//   r.bind_address = net.address();         // turns protected mode off
//   redis_server redis{r};
//   // PostgreSQL: listen_addresses = '127.0.0.1,<net.address()>' and a
//   // pg_hba.conf line "host all all <net.subnet()> trust" (the pg
//   // fixture's listen_addresses and allowed_networks).
//   auto relay_host = net.add_host("relay-1");
//   child_process relay{net.command(relay_host, outbox_argv({...}))};
//   net.cut(relay_host, net.address(), pg_port); // PostgreSQL only
//   ...                                          // past the lease ttl
//   net.restore(relay_host);
//
// Servers must listen on address(), not 127.0.0.1: a host's loopback is
// its own. The clients' URIs and endpoints name address() too. Traffic
// from a host to address() enters the root namespace's input path; traffic
// between two hosts is bridged, and where br_netfilter is loaded (Docker
// loads it) it also crosses the root namespace's forward rules.

#include <string>
#include <vector>

namespace outbox::test {

/// One simulated machine: a network namespace with one interface on the
/// bridge and a default route through it.
struct network_host {
  /// The name the test gave it ("relay-1"), for messages.
  std::string name;
  /// The namespace, "obx-<pid>-<n>": what `ip netns` lists.
  std::string netns;
  /// Its address on the bridge's /24, e.g. 10.231.7.2.
  std::string address;
  /// The root end of its veth pair (the other end is inside the host).
  std::string link;
};

/// A bridge in the root namespace on a private /24 of 10.231.0.0/16 that
/// nothing else on the machine uses, and the hosts attached to it. The
/// destructor removes every namespace, link and rule it made; the
/// constructor first removes those a crashed run left (names carrying the
/// pid of a process that no longer exists; a live process's never).
///
/// Declare it before the servers and child processes that use it, so that
/// they end first. A namespace whose processes still run when it is
/// destroyed loses its name and link at once and goes when they exit.
class host_network {
public:
  /// Why hosts cannot be made here (not root, or `ip netns add` fails),
  /// for GTEST_SKIP(); empty when they can.
  static std::string unavailable_reason();

  /// Creates the bridge with its address; throws std::runtime_error if it
  /// cannot.
  host_network();
  ~host_network();
  host_network(const host_network&) = delete;
  host_network& operator=(const host_network&) = delete;

  /// The bridge's address, x.x.x.1: where servers bind for the hosts.
  const std::string& address() const { return address_; }
  /// The bridge's network, "10.231.X.0/24" (for pg_hba.conf).
  const std::string& subnet() const { return subnet_; }
  /// The bridge's interface name.
  const std::string& bridge() const { return bridge_; }

  /// A new host: its namespace (loopback up), a veth pair to the bridge,
  /// the next free address of the /24, and a default route via address().
  network_host add_host(const std::string& name);

  /// The argv prefix that runs a program inside `host`: `ip netns exec
  /// NAME`. ip enters the namespace and execs the program in the same
  /// process, so a child_process started with it has the program's pid:
  /// signals reach the program and waitpid reaps it (a test checks
  /// both), and its PR_SET_PDEATHSIG survives the exec (ip is not
  /// setuid).
  std::vector<std::string> prefix(const network_host& host) const;

  /// prefix(host) followed by `argv`.
  std::vector<std::string> command(const network_host& host,
                                   const std::vector<std::string>& argv) const;

  /// Drops (never rejects) TCP from `host` to address:port, so connecting
  /// hangs and open connections stall, as in a real partition; other
  /// destinations and other hosts are untouched. Cutting again is a no-op.
  void cut(const network_host& host, const std::string& address, int port);

  /// Lifts every cut of `host`; a no-op when there is none.
  void restore(const network_host& host);

private:
  void pick_subnet_and_make_bridge();
  void tear_down() noexcept;

  std::string bridge_;
  std::string address_;
  std::string subnet_;
  /// 10.231.X: the first three octets of every address here.
  std::string octets_;
  std::vector<network_host> hosts_;
};

} // namespace outbox::test
