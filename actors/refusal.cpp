#include "actors/refusal.hpp"

#include "actors/log_lines.hpp"
#include "broker/broker_error.hpp"

namespace outbox::actors {

bool note_refusal(metrics::refusal_log& log, const std::exception& e,
                  storage::millis now) {
  const auto* b = dynamic_cast<const broker::broker_error*>(&e);
  if (b == nullptr || b->code() != broker::broker_errc::rejected ||
      b->reason() != broker::refusal_reason::command_refused)
    return false;
  log.note(b->where(), b->words(), now);
  return true;
}

std::string refusal_text(const metrics::refusal& r) {
  // Redis's words hold no password: AUTH is never retried here, and a
  // refusal names the command, the user's permissions or the key.
  return "Redis at " + (r.where.empty() ? std::string{"?"} : r.where) +
         " refuses the pipeline's commands: " + loggable(r.words, 512) +
         " (not an outage: fix the ACL or the proxy)";
}

} // namespace outbox::actors
