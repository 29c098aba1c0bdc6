#include "bench/interrupt_cleanup.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace outbox::bench {

namespace {

using entry = std::pair<const void*, std::function<void()>>;

std::mutex& guard() {
  static std::mutex m;
  return m;
}

/// In registration order.
std::vector<entry>& registry() {
  static std::vector<entry> cleanups;
  return cleanups;
}

std::vector<entry>::iterator find(const void* owner) {
  return std::find_if(registry().begin(), registry().end(),
                      [owner](const entry& e) { return e.first == owner; });
}

void run_quietly(const std::function<void()>& undo) {
  try {
    undo();
  } catch (...) {
    // Leaving anyway: each undo says what it could not do.
  }
}

} // namespace

void register_cleanup(const void* owner, std::function<void()> undo) {
  std::lock_guard lock{guard()};
  registry().emplace_back(owner, std::move(undo));
}

void forget_cleanup(const void* owner) {
  std::lock_guard lock{guard()};
  if (auto at = find(owner); at != registry().end())
    registry().erase(at);
}

void run_cleanup(const void* owner) {
  std::lock_guard lock{guard()};
  auto at = find(owner);
  if (at == registry().end())
    return;
  auto undo = std::move(at->second);
  registry().erase(at);
  run_quietly(undo);
}

void run_cleanups() {
  std::lock_guard lock{guard()};
  for (auto at = registry().rbegin(); at != registry().rend(); ++at)
    run_quietly(at->second);
  registry().clear();
}

} // namespace outbox::bench
