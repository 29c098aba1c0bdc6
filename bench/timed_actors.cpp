#include "bench/timed_actors.hpp"

#include "bench/actor_group.hpp"

#include <chrono>

namespace outbox::bench {

double time_actors_until(stage_context& ctx, int count,
                         const std::function<caf::actor(int)>& spawn,
                         const std::function<bool()>& done,
                         const std::string& what) {
  actor_group running{ctx.system};
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i)
    running.add(spawn(i));
  wait_until(done, std::chrono::seconds(ctx.scale.stage_timeout_s), what);
  auto seconds = seconds_since(start);
  running.stop();
  return seconds;
}

} // namespace outbox::bench
