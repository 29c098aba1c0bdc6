#pragma once

#include <caf/all.hpp>

#include <vector>

namespace outbox::bench {

/// Actors a stage started: stopped (user_shutdown) and awaited when the
/// group goes out of scope, also when the stage throws, so a failed stage
/// never leaves actors behind to hang the actor system's shutdown.
class actor_group {
public:
  explicit actor_group(caf::actor_system& system) : self_(system) {}
  ~actor_group() { stop(); }
  actor_group(const actor_group&) = delete;
  actor_group& operator=(const actor_group&) = delete;

  void add(caf::actor actor) { actors_.push_back(std::move(actor)); }

  /// Stops every actor in the reverse order of add, waiting for each.
  void stop() {
    for (auto it = actors_.rbegin(); it != actors_.rend(); ++it) {
      self_->send_exit(*it, caf::exit_reason::user_shutdown);
      self_->wait_for(*it);
    }
    actors_.clear();
  }

  /// A blocking actor of the stage's own, e.g. to receive done_atom.
  caf::scoped_actor& self() { return self_; }

private:
  caf::scoped_actor self_;
  std::vector<caf::actor> actors_;
};

} // namespace outbox::bench
