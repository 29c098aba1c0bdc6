#pragma once

// The writer's decisions, free of CAF: which requests join the group, when
// the group commits, and what each requester is answered. The writer actor
// (writer.cpp) keeps each requester's response promise, in the order its
// request joined, and translates the plan into messages and timers.

#include "actors/log_lines.hpp"
#include "actors/receipts.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/clock.hpp"
#include "storage/database.hpp"
#include "storage/db_options.hpp"
#include "storage/order_store.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::actors {

struct writer_setup {
  storage::db_options db;
  /// A group is committed once it has this many requests...
  int commit_batch = 512;
  /// ...or this long after its first request arrived; 0: once the requests
  /// already waiting in the mailbox have joined (natural batching).
  int commit_delay_ms = 2;
  storage::clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// When the gathered group commits, as decided when a request joined it.
struct commit_plan {
  enum class when {
    /// A commit is already planned for this group: nothing to do.
    planned,
    /// The group is full: commit it now.
    now,
    /// Behind every request already in the mailbox (commit_delay_ms 0).
    after_mailbox,
    /// `delay_ms` from now.
    after_delay,
  };
  when at = when::planned;
  /// The group's generation: a planned commit for an older one is stale.
  std::uint64_t generation = 0;
  int delay_ms = 0;
};

/// A request on arrival: refused at once (invalid: never in a group, so it
/// cannot fail anyone else's transaction), or joined, and then `plan` says
/// when its group commits.
struct admission {
  std::optional<std::string> refusal;
  commit_plan plan;
};

/// What one commit answers: an outcome per request of the group, in the
/// order they joined (orders and follow-ups apart). The relays are nudged
/// after every commit.
struct committed_group {
  std::vector<order_outcome> orders;
  std::vector<event_outcome> events;
};

/// The writer: owns the store that places orders and appends follow-up
/// events. Concurrent requests are group-committed (one transaction for
/// many requests, bounded by count and delay); each requester gets its own
/// result or error.
class writer_core {
public:
  /// `owner` keeps `store` alive (its database; null for a store that
  /// stands alone).
  writer_core(writer_setup setup, std::unique_ptr<storage::order_store> store,
              std::unique_ptr<storage::database> owner = nullptr);

  /// retry_of_unknown: as the ticket's (receipts.hpp).
  admission join_order(storage::order_request request,
                       bool retry_of_unknown = false);
  admission join_event(storage::event_request request,
                       bool retry_of_unknown = false);

  /// Commits the gathered group (orders, then follow-ups).
  committed_group commit();

  /// Whether a commit planned for `generation` is still for the group that
  /// gathers now.
  bool is_current(std::uint64_t generation) const {
    return generation == generation_;
  }

private:
  /// retry_of_unknown: as the ticket's.
  /// Requests waiting for the next commit, in the vector the store takes
  /// (a commit moves it out, no copy per request), and for each whether
  /// it repeats one whose commit went unanswered.
  template <class Request>
  struct pending_group {
    std::vector<Request> requests;
    std::vector<bool> retry_of_unknown;
    std::size_t size() const { return requests.size(); }
  };

  template <class Request>
  admission join(pending_group<Request>& pending, Request request,
                 bool retry_of_unknown);
  commit_plan plan_commit();
  void count_lost_commits();

  writer_setup setup_;
  pending_group<storage::order_request> orders_;
  pending_group<storage::event_request> events_;
  /// Bumped per commit: a planned commit for an older group is stale.
  std::uint64_t generation_ = 0;
  bool commit_planned_ = false;
  /// Logged when it begins and ends, not for every group it fails.
  outage database_;
  /// The store's lost_commit_outcomes() already added to the metrics.
  storage::lost_commits lost_counted_;
  /// Declared before the store: it outlives it.
  std::unique_ptr<storage::database> owner_;
  std::unique_ptr<storage::order_store> store_;
};

/// Opens the writer's database (migrated) and its order store. Throws what
/// storage::connect throws.
std::unique_ptr<writer_core> open_writer_core(writer_setup setup);

} // namespace outbox::actors
