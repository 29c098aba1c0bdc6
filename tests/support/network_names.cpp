#include "support/network_names.hpp"
#include "support/network_commands.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <regex>
#include <sstream>

namespace outbox::test {

namespace {

/// True when no process has this pid (digits only, from a name).
bool process_gone(const std::string& pid) {
  if (pid.size() > 9) // beyond any pid_max: not a name of ours
    return false;
  return ::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH;
}

} // namespace

int next_network_serial() {
  static std::atomic<int> serial{0};
  return serial++;
}

std::string network_link_name(char kind, int serial) {
  return "obx" + std::to_string(::getpid()) + kind + std::to_string(serial);
}

std::string network_namespace_name(int serial) {
  return "obx-" + std::to_string(::getpid()) + "-" + std::to_string(serial);
}

void remove_dead_runs_leftovers() {
  // Links first: a veth left in the root namespace keeps no namespace
  // alive, but deleting it frees its peer at once.
  static const std::regex link_pattern{R"(^\d+: (obx(\d+)[a-z]\d+)[@:])"};
  std::istringstream links{ip_output({"-o", "link", "show"})};
  for (std::string line; std::getline(links, line);) {
    std::smatch name;
    if (std::regex_search(line, name, link_pattern) && process_gone(name[2]))
      run_ip({"link", "del", name[1]});
  }
  static const std::regex netns_pattern{R"(^(obx-(\d+)-\d+)( |$))"};
  std::istringstream namespaces{ip_output({"netns", "list"})};
  for (std::string line; std::getline(namespaces, line);) {
    std::smatch name;
    if (std::regex_search(line, name, netns_pattern) && process_gone(name[2]))
      run_ip({"netns", "del", name[1]});
  }
}

} // namespace outbox::test
