#pragma once

// The token of an acquisition of the consumers' lock
// (broker/consumer_lock.hpp), which the fence of that acquisition's
// consumers carries. The process mints it; it is never read from Redis:
// a counter kept there (INCR) goes backwards when a failover promotes a
// replica that missed its last increments, and would hand a second holder
// the token the first still fences with. `holder` names the process
// (host, pid, start time and random bits: coordinator_setup::
// consumer_lock_holder) and
// `acquisition` only grows within it, so no two acquisitions, in one
// process or in two, before or after a failover, share a token.

#include <cstdint>
#include <string>

namespace outbox::actors {

/// "<holder>#<acquisition>", acquisitions counted from 1.
inline std::string acquisition_token(const std::string& holder,
                                     std::uint64_t acquisition) {
  return holder + "#" + std::to_string(acquisition);
}

} // namespace outbox::actors
