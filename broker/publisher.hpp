#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "broker/lua_script.hpp"

#include <vector>

namespace outbox::broker {

/// Pushes a relay's claimed batch to the queue(s).
class publisher {
public:
  publisher(connection& conn, keys names);

  /// Publishes the entries, in the given order, as one atomic operation: one
  /// RPUSH with many values when they all go to one list, one Lua script
  /// over the lists otherwise (it checks every list's type before writing;
  /// MULTI/EXEC would keep the other pushes when one fails with WRONGTYPE).
  /// Either all are enqueued or none. On a connection error the outcome is
  /// unknown: the caller must treat the batch as maybe published (the relay
  /// hands the rows back; a second publish is a duplicate the inbox
  /// absorbs). With redis.min_replica_acks, the push is acknowledged only
  /// once that many replicas have it (WAIT): fewer within
  /// redis.replica_ack_timeout_ms throws broker_error(unavailable), the
  /// entries pushed but not acknowledged. An entry whose encoding exceeds
  /// names.max_entry_bytes
  /// makes the whole call throw broker_error(rejected), naming its event_id
  /// and both sizes, before anything is sent. Throws broker_error.
  void publish(const std::vector<event_entry>& entries);

  /// Publishes already-encoded entries to one list (the lab's relay).
  void publish_encoded(const std::string& list,
                       const std::vector<std::string>& encoded);

private:
  /// WAIT for connection_options::min_replica_acks, when it is set.
  void wait_for_replicas();

  connection& conn_;
  keys names_;
  lua_script push_script_;
};

} // namespace outbox::broker
