#include "bench/interrupt_cleanup.hpp"

#include <map>
#include <mutex>

namespace outbox::bench {

namespace {

std::mutex& guard() {
  static std::mutex m;
  return m;
}

std::map<const void*, std::function<void()>>& registry() {
  static std::map<const void*, std::function<void()>> cleanups;
  return cleanups;
}

} // namespace

void register_cleanup(const void* owner, std::function<void()> undo) {
  std::lock_guard lock{guard()};
  registry()[owner] = std::move(undo);
}

void forget_cleanup(const void* owner) {
  std::lock_guard lock{guard()};
  registry().erase(owner);
}

void run_cleanups() {
  std::lock_guard lock{guard()};
  for (auto& [owner, undo] : registry()) {
    try {
      undo();
    } catch (...) {
      // Leaving anyway: what could not be undone stays, named by the
      // caller's message.
    }
  }
  registry().clear();
}

} // namespace outbox::bench
