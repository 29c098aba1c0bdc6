#pragma once

// How a long-running process stops: SIGINT and SIGTERM, blocked in every
// thread (CAF's included), are taken by one thread of its own and turned
// into a graceful shutdown of the coordinator.

#include "actors/interfaces.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace outbox::cli {

class signal_watch {
public:
  /// Watches from now until destroyed. `on_stop` is called on the first
  /// stop signal, before the coordinator is told; `who` names the process
  /// in what it says on stderr.
  signal_watch(actors::coordinator_handle coordinator, std::string who,
               std::function<void()> on_stop);
  ~signal_watch();
  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;

  /// The first stop signal taken (SIGINT, SIGTERM), 0 for none.
  int signal() const { return signal_; }

private:
  void watch(const actors::coordinator_handle& coordinator,
             const std::string& who, const std::function<void()>& on_stop);

  std::atomic<bool> done_{false};
  std::atomic<int> signal_{0};
  // Last: started once the flags above exist.
  std::thread thread_;
};

} // namespace outbox::cli
