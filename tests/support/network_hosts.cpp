#include "support/network_hosts.hpp"
#include "support/network_commands.hpp"
#include "support/network_names.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace outbox::test {

namespace {

/// The nft table that holds a host's cuts: a set of address . port pairs
/// and one rule dropping TCP to them on output.
constexpr const char* cut_table = "inet outbox_cut";

/// Held while a process picks a subnet and gives it to its bridge, so that
/// two test processes (ctest -j) never pick the same one. flock goes with
/// the process, even a killed one; the empty file stays in /run/lock
/// (removing a lock file races with the next process locking it).
class subnet_lock {
public:
  subnet_lock()
      : fd_(::open("/run/lock/outbox-host-network.lock",
                   O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) == 0)
      return;
    if (fd_ >= 0)
      ::close(fd_);
    throw std::runtime_error("cannot lock /run/lock/outbox-host-network.lock");
  }
  ~subnet_lock() { ::close(fd_); }
  subnet_lock(const subnet_lock&) = delete;
  subnet_lock& operator=(const subnet_lock&) = delete;

private:
  int fd_;
};

/// An IPv4 network as a number and a prefix length.
struct ipv4_net {
  std::uint32_t base = 0;
  int length = 32;
};

/// Parses "a.b.c.d" or "a.b.c.d/n"; false for anything else ("default").
bool parse_net(const std::string& text, ipv4_net& net) {
  unsigned a, b, c, d;
  int length = 32;
  char slash = 0;
  int fields = std::sscanf(text.c_str(), "%u.%u.%u.%u%c%d", &a, &b, &c, &d,
                           &slash, &length);
  if (fields != 4 && !(fields == 6 && slash == '/'))
    return false;
  net.base = (a << 24) | (b << 16) | (c << 8) | d;
  net.length = length;
  return true;
}

bool overlap(const ipv4_net& x, const ipv4_net& y) {
  int length = std::min(x.length, y.length);
  std::uint32_t mask = length == 0 ? 0 : ~std::uint32_t{0} << (32 - length);
  return (x.base & mask) == (y.base & mask);
}

/// What a new /24 must not overlap: each address of the root namespace
/// (as a /32) and each route of /24 or narrower. A broader route, say a
/// 10.0.0.0/8 LAN, only loses one /24 to the bridge while it exists;
/// avoiding every such route would leave no subnet on some machines.
std::vector<ipv4_net> networks_in_use() {
  std::vector<ipv4_net> used;
  std::istringstream addresses{ip_output({"-4", "-o", "addr", "show"})};
  for (std::string word; addresses >> word;) {
    ipv4_net net;
    if (word == "inet" && addresses >> word && parse_net(word, net)) {
      net.length = 32;
      used.push_back(net);
    }
  }
  std::istringstream routes{ip_output({"-4", "route", "show"})};
  for (std::string line; std::getline(routes, line);) {
    ipv4_net net;
    if (parse_net(line.substr(0, line.find(' ')), net) && net.length >= 24)
      used.push_back(net);
  }
  return used;
}

/// Runs nft inside `host` with `script` (commands separated by `;`, applied
/// as one transaction).
void must_nft(const host_network& net, const network_host& host,
              const std::string& script) {
  must_run(net.command(host, {nft_binary(), script}));
}

} // namespace

std::string host_network::unavailable_reason() {
  static const std::string reason = [] {
    if (::geteuid() != 0)
      return std::string{"network namespaces need root (CI runs as root)"};
    if (ip_binary().empty())
      return std::string{"iproute2's ip is not installed"};
    auto probe = network_namespace_name(next_network_serial());
    auto made = run_ip({"netns", "add", probe});
    if (made.exit_code != 0)
      return "cannot make a network namespace (ip netns add): " + made.err;
    run_ip({"netns", "del", probe});
    return std::string{};
  }();
  return reason;
}

host_network::host_network() {
  if (ip_binary().empty())
    throw std::runtime_error("iproute2's ip is not installed");
  try {
    subnet_lock lock;
    remove_dead_runs_leftovers();
    pick_subnet_and_make_bridge();
  } catch (...) {
    tear_down(); // the destructor will not run
    throw;
  }
}

host_network::~host_network() {
  tear_down();
}

void host_network::pick_subnet_and_make_bridge() {
  auto used = networks_in_use();
  int start = static_cast<int>(::getpid() % 256);
  for (int step = 0; step < 256; ++step) {
    auto octets = "10.231." + std::to_string((start + step) % 256);
    ipv4_net candidate;
    parse_net(octets + ".0/24", candidate);
    bool taken = false;
    for (const auto& net : used)
      taken = taken || overlap(net, candidate);
    if (taken)
      continue;
    octets_ = octets;
    address_ = octets + ".1";
    subnet_ = octets + ".0/24";
    bridge_ = network_link_name('b', next_network_serial());
    must_ip({"link", "add", bridge_, "type", "bridge"});
    must_ip({"addr", "add", address_ + "/24", "dev", bridge_});
    must_ip({"link", "set", bridge_, "up"});
    return;
  }
  throw std::runtime_error("no free /24 left in 10.231.0.0/16");
}

network_host host_network::add_host(const std::string& name) {
  if (hosts_.size() >= 253)
    throw std::runtime_error("a /24 holds at most 253 hosts");
  int serial = next_network_serial();
  network_host host;
  host.name = name;
  host.netns = network_namespace_name(serial);
  host.address = octets_ + "." + std::to_string(hosts_.size() + 2);
  host.link = network_link_name('v', serial);
  // Recorded before it exists: a failure below still removes what was made.
  hosts_.push_back(host);
  auto inside = network_link_name('h', serial);
  must_ip({"netns", "add", host.netns});
  must_ip({"link", "add", host.link, "type", "veth", "peer", "name", inside,
           "netns", host.netns});
  must_ip({"link", "set", host.link, "master", bridge_, "up"});
  must_ip(
      {"-n", host.netns, "addr", "add", host.address + "/24", "dev", inside});
  must_ip({"-n", host.netns, "link", "set", inside, "up"});
  must_ip({"-n", host.netns, "link", "set", "lo", "up"});
  must_ip({"-n", host.netns, "route", "add", "default", "via", address_});
  return host;
}

std::vector<std::string> host_network::prefix(const network_host& host) const {
  return {ip_binary(), "netns", "exec", host.netns};
}

std::vector<std::string>
host_network::command(const network_host& host,
                      const std::vector<std::string>& argv) const {
  auto full = prefix(host);
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

void host_network::cut(const network_host& host, const std::string& address,
                       int port) {
  // One nft transaction: the chain is flushed and its one rule added again,
  // so cutting twice never stacks rules; adding a present element is a
  // no-op.
  std::string table = cut_table;
  must_nft(*this, host,
           "add table " + table + "; add set " + table +
               " targets { type ipv4_addr . inet_service; }; add chain " +
               table +
               " output { type filter hook output priority 0; policy accept; "
               "}; flush chain " +
               table + " output; add rule " + table +
               " output ip daddr . tcp dport @targets counter drop; "
               "add element " +
               table + " targets { " + address + " . " + std::to_string(port) +
               " }");
}

void host_network::restore(const network_host& host) {
  // Adding the table first makes deleting it succeed when it is absent.
  std::string table = cut_table;
  must_nft(*this, host, "add table " + table + "; delete table " + table);
}

void host_network::tear_down() noexcept {
  // Deleting one end of a veth pair deletes both, at once; a deleted
  // namespace frees its links only once no process is left in it.
  try {
    for (const auto& host : hosts_) {
      run_ip({"link", "del", host.link});
      run_ip({"netns", "del", host.netns});
    }
    if (!bridge_.empty())
      run_ip({"link", "del", bridge_});
  } catch (...) {
    // fork or a capture file failed: a later run sweeps what is left.
  }
  hosts_.clear();
  bridge_.clear();
}

} // namespace outbox::test
