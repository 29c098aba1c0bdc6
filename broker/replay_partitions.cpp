#include "broker/replay_partitions.hpp"

#include "broker/keys.hpp"

#include <algorithm>

namespace outbox::broker {

partitions_agreement partitions_for_replay(connection& conn,
                                           const keys& names) {
  partitions_agreement agreement;
  agreement.ours = std::max<std::size_t>(names.partitions, 1);
  agreement.recorded = recorded_partitions(conn, names);
  return agreement;
}

} // namespace outbox::broker
