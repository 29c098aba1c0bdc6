#pragma once

// Whether this connection's user may send what the pipeline sends, asked
// without running any of it: each command, on the pipeline's own keys, is
// queued inside MULTI and the transaction discarded. Redis checks a queued
// command against the user's ACL (the command and its keys) and its command
// table (a renamed or unknown command) as it queues it, so the replies name
// every refusal, and nothing is written. `outbox status` shows them and
// `outbox run` refuses to start on them (startup/redis_preflight.hpp); a
// refusal that comes mid-run, an ACL changed under a running pipeline, is
// the actors' to meet (actors/refusal.hpp).

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <string>
#include <vector>

namespace outbox::broker {

/// Which side of the pipeline a command serves.
enum class pipeline_side { relays, consumers };

const char* to_string(pipeline_side side);

/// A command Redis refuses this user.
struct refused_command {
  /// The command and its key as queued: "RPUSH pipeline:outbox.events.0".
  std::string command;
  pipeline_side needed_by = pipeline_side::relays;
  /// Redis's reply: "NOPERM this user has no permissions to run the 'rpush'
  /// command".
  std::string words;
};

/// The commands the relays (publish: RPUSH, the doorbells, the multi-list
/// script, and WAIT when the connection's min_replica_acks asks for
/// replicas) and the consumers (their scripts and every command in them,
/// the consumers' lock and notes, the doorbells they wait on, the
/// recovery's SCAN), on the keys of `names`, that Redis refuses this
/// connection (broker::refuses_the_command: not a server state such as a
/// replica's READONLY); one per command name and refusal. Empty when all are
/// allowed, or when MULTI itself is (nothing can be asked then). Throws
/// broker_error(unavailable) when Redis cannot be reached.
std::vector<refused_command> refused_commands(connection& conn,
                                              const keys& names, bool relays,
                                              bool consumers);

/// "RPUSH pipeline:outbox.events.0 (relays): NOPERM ...; ...", at most
/// `most` of them, then how many more.
std::string describe(const std::vector<refused_command>& refused,
                     std::size_t most = 3);

} // namespace outbox::broker
