#pragma once

#include <exception>

namespace outbox::actors {

/// Whether a failed store call is an outage worth waiting out rather than a
/// fault: Redis unreachable, timed out or not ready yet (broker_error
/// unavailable), or the database locked by another connection past
/// busy_timeout (store_error busy). Anything else will not heal by waiting.
bool is_outage(const std::exception& e);

} // namespace outbox::actors
