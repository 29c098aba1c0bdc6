#include "actors/outage.hpp"

#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace outbox::actors {

bool is_outage(const std::exception& e) {
  if (const auto* b = dynamic_cast<const broker::broker_error*>(&e))
    return b->code() == broker::broker_errc::unavailable;
  if (const auto* s = dynamic_cast<const storage::store_error*>(&e))
    return s->code() == storage::store_errc::busy;
  return false;
}

namespace {

using state_at = std::pair<std::string, broker::server_state>;
using steady = std::chrono::steady_clock;

/// A reply refused before the server recovered may reach its actor after
/// another actor's write went through (actors run on several threads): it
/// belongs to the outage just cleared, not to a new one. Longer than a
/// reply takes to be handled, shorter than a failover takes to happen.
constexpr auto late_reply_grace = std::chrono::seconds(2);

std::mutex announced_mutex;
/// (address, state) pairs said since the last write went through.
std::set<state_at> announced;
/// The pairs the last write cleared, and when.
std::set<state_at> cleared;
steady::time_point cleared_at;

} // namespace

void note_outage(std::atomic<std::int64_t>& outage_retries,
                 const std::exception& e) {
  if (!is_outage(e))
    return;
  outage_retries++;
  if (const auto* b = dynamic_cast<const broker::broker_error*>(&e))
    announce_server_state(*b);
}

void server_states_cleared() {
  std::lock_guard<std::mutex> lock{announced_mutex};
  if (announced.empty())
    return;
  cleared = std::move(announced);
  announced.clear();
  cleared_at = steady::now();
}

void announce_server_state(const broker::broker_error& e) {
  if (e.state() == broker::server_state::none)
    return;
  {
    std::lock_guard<std::mutex> lock{announced_mutex};
    state_at key{e.where(), e.state()};
    if (!announced.insert(key).second)
      return;
    if (cleared.count(key) && steady::now() - cleared_at < late_reply_grace)
      return;
  }
  spdlog::warn("Redis at {} {}: waiting", e.where().empty() ? "?" : e.where(),
               broker::describe(e.state()));
}

} // namespace outbox::actors
