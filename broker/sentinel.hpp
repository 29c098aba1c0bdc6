#pragma once

// Asking Redis Sentinel where a master is, as Redis's guidelines for
// Sentinel clients say: each sentinel in turn with a short timeout, the one
// that answered moved to the front, its answer trusted only once the
// server there says it is a master (connection.cpp checks ROLE). hiredis has
// no Sentinel code of its own.

#include "broker/connection.hpp"
#include "broker/sentinel_set.hpp"

namespace outbox::broker {

/// The master's address as the first sentinel of `set` that knows it
/// says (SENTINEL GET-MASTER-ADDR-BY-NAME); that sentinel moves to the
/// front of set.sentinels. Throws broker_error(unavailable), an outage to
/// wait out like a Redis that is down, naming every sentinel asked: none
/// answered (each one's reason), or those that answered know no master of
/// that name (a misspelt name, or sentinels that monitor another).
endpoint ask_sentinels(sentinel_set& set);

/// How to connect to the sentinel at `where` of `set`: its timeout for
/// both connecting and each answer, the sentinels' own credentials.
connection_options sentinel_options(const sentinel_set& set,
                                    const endpoint& where);

} // namespace outbox::broker
