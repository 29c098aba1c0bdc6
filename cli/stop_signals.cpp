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

bool wait_for_signal(const sigset_t& signals, const timespec& timeout) {
  for (;;) {
    if (::sigtimedwait(&signals, nullptr, &timeout) > 0)
      return true;
    if (errno == EAGAIN)
      return false;
    if (errno != EINTR)
      throw std::system_error(errno, std::generic_category(),
                              "cannot wait for SIGINT or SIGTERM");
  }
}

} // namespace outbox::cli
