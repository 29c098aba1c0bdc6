#include "actors/coordinator_progress.hpp"

#include <algorithm>
#include <sstream>

namespace outbox::actors {

std::string progress_line(const coordinator_state& st,
                          const pipeline_snapshot& s) {
  std::ostringstream out;
  const auto& m = *st.setup.metrics;
  out << "orders " << s.orders << " | outbox pending " << s.pending
      << " sending " << s.sending << " published " << s.published << " failed "
      << s.failed << " | queued " << s.queued << " processing "
      << s.in_processing << " processed " << s.processed << " dup "
      << s.duplicates << " | restarts relay " << m.relay_restarts.load()
      << " consumer " << m.consumer_restarts.load();
  if (!s.trouble.empty())
    out << " | " << s.trouble;
  return out.str();
}

bool drained(const coordinator_state& st, const pipeline_snapshot& s) {
  const auto& run = st.setup.settings.run;
  if (!s.trouble.empty() || !st.load_done)
    return false;
  bool relays_done = run.relays == 0 || s.pending + s.sending == 0;
  bool consumers_done =
      run.consumers == 0 ||
      (s.pending + s.sending == 0 && s.queued == 0 && s.in_processing == 0);
  return relays_done && consumers_done;
}

storage::millis stall_timeout(const coordinator_state& st) {
  const auto& s = st.setup.settings;
  return std::max<storage::millis>(2 * s.lease.ttl, s.lease.backoff_max) +
         s.run.idle_poll_max_ms + 1000;
}

bool stalled(coordinator_state& st, const pipeline_snapshot& s,
             storage::millis now) {
  auto signature = std::make_tuple(s.pending, s.sending, s.published, s.failed,
                                   s.queued, s.in_processing, s.processed);
  if (signature != st.progress_signature) {
    st.progress_signature = signature;
    st.last_movement = now;
    return false;
  }
  return s.failed > 0 && s.trouble.empty() &&
         now - st.last_movement >= stall_timeout(st);
}

} // namespace outbox::actors
