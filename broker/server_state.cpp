#include "broker/server_state.hpp"

#include <utility>

namespace outbox::broker {

server_state server_state_of(std::string_view error) {
  // Redis 7 keeps a command's error code when a script's redis.call fails
  // ("READONLY You can't write ... script: ..."), so one rule covers
  // commands and scripts.
  static const std::pair<std::string_view, server_state> codes[] = {
      {"LOADING", server_state::loading},
      {"BUSY", server_state::busy},
      {"MASTERDOWN", server_state::master_down},
      {"TRYAGAIN", server_state::try_again},
      {"READONLY", server_state::read_only},
      {"OOM", server_state::out_of_memory},
      {"NOREPLICAS", server_state::no_replicas},
      {"CLUSTERDOWN", server_state::cluster_down},
      {"MISCONF", server_state::cannot_persist},
      {"UNBLOCKED", server_state::unblocked},
  };
  auto end = error.find(' ');
  auto code = error.substr(0, end);
  for (const auto& [name, state] : codes)
    if (code == name)
      return state;
  return server_state::none;
}

const char* describe(server_state state) {
  switch (state) {
  case server_state::none:
    return "refused a command";
  case server_state::loading:
    return "is loading its dataset";
  case server_state::busy:
    return "is busy running a script";
  case server_state::master_down:
    return "is a replica without its master";
  case server_state::try_again:
    return "asks to try again (a slot is moving)";
  case server_state::read_only:
    return "is read-only (a replica)";
  case server_state::out_of_memory:
    return "is out of memory (maxmemory reached, noeviction)";
  case server_state::no_replicas:
    return "has fewer replicas than min-replicas-to-write";
  case server_state::cluster_down:
    return "reports its cluster down";
  case server_state::cannot_persist:
    return "refuses writes: it cannot persist (MISCONF)";
  case server_state::unblocked:
    return "ended a blocked command: it is no longer a master (UNBLOCKED)";
  case server_state::replicas_behind:
    return "has fewer replicas with each push than redis.min_replica_acks "
           "asks for";
  }
  return "is unavailable";
}

} // namespace outbox::broker
