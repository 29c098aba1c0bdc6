#include "cli/stop_signals.hpp"

#include <cerrno>
#include <system_error>

namespace outbox::cli {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

int wait_for_signal(const sigset_t& signals, const timespec& timeout) {
  for (;;) {
    if (int taken = ::sigtimedwait(&signals, nullptr, &timeout); taken > 0)
      return taken;
    if (errno == EAGAIN)
      return 0;
    if (errno != EINTR)
      throw std::system_error(errno, std::generic_category(),
                              "cannot wait for SIGINT or SIGTERM");
  }
}

std::string signal_name(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "signal " + std::to_string(signal);
  }
}

} // namespace outbox::cli
