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

std::string stall_reason(coordinator_state& st, const pipeline_snapshot& s,
                         storage::millis now) {
  auto signature = std::make_tuple(s.pending, s.sending, s.published, s.failed,
                                   s.queued, s.in_processing, s.processed,
                                   st.setup.metrics->outage_retries.load());
  if (signature != st.progress_signature) {
    st.progress_signature = signature;
    st.last_movement = now;
    return {};
  }
  // The writer's own trouble ends the run through its death, not here.
  if (!s.trouble.empty() || !st.load_done ||
      now - st.last_movement < stall_timeout(st) || drained(st, s))
    return {};
  auto still = " and nothing moved for " +
               std::to_string(stall_timeout(st) / 1000) + " s";
  if (s.failed > 0)
    return "stalled behind FAILED rows: " + std::to_string(s.failed) +
           " FAILED rows block " + std::to_string(s.pending + s.sending) +
           " later rows of their aggregates" + still +
           "; see `outbox status`, fix the cause, then `outbox retry`";
  if (s.queued + s.in_processing > 0)
    return "stalled: " + std::to_string(s.queued) + " entries queued and " +
           std::to_string(s.in_processing) +
           " in processing lists are not consumed" + still +
           "; see the consumers' warnings and `outbox status`";
  return "stalled: " + std::to_string(s.pending + s.sending) +
         " rows PENDING or SENDING are not published" + still +
         (st.setup.settings.run.relays == 0 ? " (no relay runs in this process)"
                                            : "") +
         "; see `outbox status`";
}

} // namespace outbox::actors
