#pragma once

// Error replies that refuse the command itself, whoever sends it and
// whatever it carries: an ACL without the command or the key (NOPERM), a
// proxy or a server that does not know the command (renamed away,
// disabled). Unlike a server state (server_state.hpp) waiting does not end
// them; unlike a refused entry no row is to blame. Someone must change the
// ACL or the proxy.

#include <string_view>

namespace outbox::broker {

/// Whether an error reply's text refuses the command for this user or on
/// this server: NOPERM (or its words for a script's redis.call), ERR
/// unknown command / unknown subcommand.
bool refuses_the_command(std::string_view error);

} // namespace outbox::broker
