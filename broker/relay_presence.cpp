#include "broker/relay_presence.hpp"

#include "broker/connection.hpp"
#include "broker/lua_files.hpp"

#include <string>
#include <utility>

namespace outbox::broker {

relay_presence::relay_presence(connection& conn, std::string processes)
    : conn_(conn), processes_(std::move(processes)),
      note_(lua_source({lua_files::relay_presence_note})) {}

void relay_presence::note(const std::string& process, int relays,
                          std::int64_t ttl_ms) {
  note_.run(conn_, {processes_},
            {process, "running", std::to_string(relays), std::to_string(ttl_ms),
             std::to_string(relay_note_kept_ms)});
}

void relay_presence::stopped(const std::string& process) {
  note_.run(conn_, {processes_},
            {process, "stopped", "0", "0", std::to_string(relay_note_kept_ms)});
}

} // namespace outbox::broker
