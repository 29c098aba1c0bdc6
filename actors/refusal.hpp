#pragma once

// Redis refusing the pipeline's commands, not in a state it names: an ACL
// without a command or a key (NOPERM), a proxy or a server without the
// command. Relays and consumers retry it like an outage, without charging
// a row, but it is not one: waiting does not end it. So it is not counted
// as an outage (a bounded run it holds up stalls), and once it has come
// back for the stall timeout the coordinator names it.

#include "metrics/refusal_log.hpp"
#include "storage/types.hpp"

#include <exception>
#include <string>

namespace outbox::actors {

/// When `e` is Redis refusing the command (broker::refuses_the_command),
/// notes it in `log` at `now` and returns true.
bool note_refusal(metrics::refusal_log& log, const std::exception& e,
                  storage::millis now);

/// "Redis at 127.0.0.1:6390 refuses the pipeline's commands: NOPERM ...
/// (not an outage: fix the ACL or the proxy)", Redis's words cut to a few
/// hundred bytes and escaped.
std::string refusal_text(const metrics::refusal& r);

} // namespace outbox::actors
