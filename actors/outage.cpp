#include "actors/outage.hpp"

#include "broker/broker_error.hpp"
#include "storage/store_error.hpp"

#include <spdlog/spdlog.h>

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

std::mutex announced_mutex;
/// (address, state) pairs said since the last write went through.
std::set<std::pair<std::string, broker::server_state>> announced;

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
  announced.clear();
}

void announce_server_state(const broker::broker_error& e) {
  if (e.state() == broker::server_state::none)
    return;
  {
    std::lock_guard<std::mutex> lock{announced_mutex};
    if (!announced.insert({e.where(), e.state()}).second)
      return;
  }
  spdlog::warn("Redis at {} {}: waiting", e.where().empty() ? "?" : e.where(),
               broker::describe(e.state()));
}

} // namespace outbox::actors
