#include "bench/process_memory.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace outbox::bench {

bool reset_peak_resident() {
  std::ofstream refs{"/proc/self/clear_refs"};
  refs << "5";
  refs.flush();
  return static_cast<bool>(refs);
}

namespace {

/// A "Vm...:  <kB> kB" line of a /proc/<pid>/status file, in MiB.
std::optional<double> status_mib(const std::string& path,
                                 const std::string& field) {
  std::ifstream status{path};
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) != 0)
      continue;
    std::istringstream fields{line.substr(field.size())};
    double kib = 0;
    if (fields >> kib)
      return kib / 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

std::optional<double> peak_resident_mib() {
  return status_mib("/proc/self/status", "VmHWM:");
}

std::optional<double> resident_mib(pid_t pid) {
  return status_mib("/proc/" + std::to_string(pid) + "/status", "VmRSS:");
}

std::optional<double> peak_resident_mib(pid_t pid) {
  return status_mib("/proc/" + std::to_string(pid) + "/status", "VmHWM:");
}

} // namespace outbox::bench
