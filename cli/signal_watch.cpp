#include "cli/signal_watch.hpp"

#include "actors/messages.hpp"
#include "cli/notice.hpp"
#include "cli/progress_output.hpp"
#include "cli/stop_signals.hpp"

#include <caf/all.hpp>

#include <system_error>
#include <utility>

namespace outbox::cli {

signal_watch::signal_watch(actors::coordinator_handle coordinator,
                           std::string who, std::function<void()> on_stop)
    : thread_([this, coordinator = std::move(coordinator), who = std::move(who),
               on_stop = std::move(on_stop)] {
        watch(coordinator, who, on_stop);
      }) {}

signal_watch::~signal_watch() {
  done_ = true;
  thread_.join();
}

void signal_watch::watch(const actors::coordinator_handle& coordinator,
                         const std::string& who,
                         const std::function<void()>& on_stop) {
  sigset_t set = stop_signals();
  timespec tick{0, 200'000'000};
  try {
    while (!done_) {
      int taken = wait_for_signal(set, tick);
      if (taken == 0)
        continue;
      // The first stop is announced; another (an impatient second Ctrl-C)
      // only says the stop is under way.
      int expected = 0;
      end_progress_line();
      if (signal_.compare_exchange_strong(expected, taken)) {
        notice(who, signal_name(taken) +
                        ": stopping gracefully (leases released, in-flight "
                        "work finished)");
        on_stop();
        caf::anon_send(coordinator, actors::shutdown_atom_v);
      } else {
        notice(who, signal_name(taken) + ": already stopping");
      }
    }
  } catch (const std::system_error& e) {
    // Deaf to signals from now on: stop rather than run unstoppable.
    end_progress_line();
    notice(who, std::string{e.what()} + "; stopping", "error");
    caf::anon_send(coordinator, actors::shutdown_atom_v);
  }
}

} // namespace outbox::cli
