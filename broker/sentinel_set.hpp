#pragma once

// Redis under Sentinel: a master whose address changes when Sentinel
// promotes a replica. A client names the sentinels and the master's name,
// and asks them where the master is now (broker/sentinel.hpp) on every
// connection; the master's own credentials are the connection's, as for a
// Redis at a fixed address.

#include "broker/endpoint.hpp"

#include <string>
#include <vector>

namespace outbox::broker {

struct sentinel_set {
  /// Asked in this order; the one that answered moves to the front.
  std::vector<endpoint> sentinels;
  /// The name the sentinels monitor the master under (`sentinel monitor
  /// NAME ...`).
  std::string master_name;
  /// Who we are to the sentinels (their own requirepass or ACL user), when
  /// they want it; none of the master's.
  std::string username;
  std::string password;
  /// Bound on connecting to one sentinel and on its answer: a sentinel that
  /// is down must not hold up asking the next.
  int timeout_ms = 500;

  /// "HOST:PORT, HOST:PORT (master NAME)" for messages.
  std::string to_string() const;
};

} // namespace outbox::broker
