#pragma once

// Timing a group of detached actors that work off a prefilled backlog: the
// relay and consumer stages differ only in which actor they start and in what
// says the backlog is done.

#include "bench/stages.hpp"

#include <caf/actor.hpp>

#include <functional>
#include <string>

namespace outbox::bench {

/// Starts `count` actors with `spawn(i)` for i in [0, count), waits until
/// `done` holds (throwing, named by `what`, after the stage timeout), then
/// stops them all, also when the wait throws. Returns the seconds from the
/// first spawn to `done`: stopping is not timed.
double time_actors_until(stage_context& ctx, int count,
                         const std::function<caf::actor(int)>& spawn,
                         const std::function<bool()>& done,
                         const std::string& what);

} // namespace outbox::bench
