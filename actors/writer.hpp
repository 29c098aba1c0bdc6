#pragma once

#include "actors/log_lines.hpp"
#include "actors/relay.hpp"
#include "actors/writer_reply.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/database.hpp"
#include "storage/order_store.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <memory>
#include <vector>

namespace outbox::actors {

struct writer_setup {
  storage::db_options db;
  /// A group is committed once it has this many requests...
  int commit_batch = 512;
  /// ...or this long after its first request arrived; 0: once the requests
  /// already waiting in the mailbox have joined (natural batching).
  int commit_delay_ms = 2;
  clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// The writer: owns the database connection that places orders and appends
/// follow-up events. Concurrent requests are group-committed (one
/// transaction for many requests, bounded by count and delay); each
/// requester gets its own result or error. Relays are nudged after a commit.
struct writer_state {
  static inline const char* name = "writer";

  /// retry_of_unknown: as the ticket's (messages.hpp).
  struct pending_order {
    storage::order_request request;
    reply_to<order_receipt> reply;
    bool retry_of_unknown = false;
  };
  struct pending_event {
    storage::event_request request;
    reply_to<event_receipt> reply;
    bool retry_of_unknown = false;
  };

  writer_setup setup;
  std::unique_ptr<storage::database> db;
  std::unique_ptr<storage::order_store> store;
  std::vector<pending_order> orders;
  std::vector<pending_event> events;
  /// Bumped per commit: a delayed commit message for an older group is stale.
  std::uint64_t generation = 0;
  bool commit_scheduled = false;
  std::vector<caf::actor> relays;
  /// Logged when it begins and ends, not for every group it fails.
  outage database;
  /// The store's lost_commit_outcomes() already added to the metrics.
  storage::lost_commits lost_counted;
};

using writer_actor = caf::stateful_actor<writer_state>;

/// Messages: (place_atom, request_id or "", sku, qty) -> order_receipt;
/// (append_atom, aggregate_id, event_type, payload) -> event_receipt;
/// (place_batch_atom, std::vector<order_ticket>) and (append_batch_atom,
/// std::vector<event_ticket>) -> one outcome per ticket, in order, each as
/// the single request would have been answered;
/// (relays_atom, std::vector<caf::actor>) sets who to nudge.
caf::behavior writer(writer_actor* self, writer_setup setup);

} // namespace outbox::actors
