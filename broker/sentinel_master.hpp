#pragma once

// What the sentinels know of the master, for `outbox status`: since when it
// is the master and the sentinels' failover epoch, as the first sentinel
// that answers sees it (SENTINEL MASTER).

#include "broker/sentinel_set.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

struct sentinel_master {
  /// The sentinel that answered.
  endpoint asked;
  /// How long ago it saw the master take that role (role-reported-time):
  /// its promotion, or the sentinel's own start when no failover happened
  /// since.
  std::int64_t master_for_ms = 0;
  /// The configuration epoch (config-epoch): the sentinels' own, raised
  /// by each failover they start (and by elections that came to nothing);
  /// 0 while they never failed over a master they watch.
  std::int64_t failover_epoch = 0;
  /// The sentinel's flags for it: "master", with "s_down", "o_down" or
  /// "failover_in_progress" when it is down or being replaced.
  std::string flags;
};

/// SENTINEL MASTER from the first sentinel of `set` that describes
/// `master` (each asked as ask_sentinels does): in a failover, the one
/// leading it still describes the old master until it ends, while others
/// have switched. Throws broker_error(unavailable) naming each sentinel's
/// reason when none does.
sentinel_master describe_master(const sentinel_set& set,
                                const endpoint& master);

} // namespace outbox::broker
