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

std::optional<double> peak_resident_mib() {
  std::ifstream status{"/proc/self/status"};
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0)
      continue;
    std::istringstream fields{line.substr(6)};
    double kib = 0;
    if (fields >> kib)
      return kib / 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace outbox::bench
