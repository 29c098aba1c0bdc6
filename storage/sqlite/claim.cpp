// sqlite::lease_store::claim_rows, SQLite's part of claim_batch: the lease
// protocol's claim with its head-of-line rule (docs/postgres-protocol.md,
// "Claim", states it).

#include "storage/sqlite/lease_store.hpp"

#include "storage/sqlite/lease_store_impl.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace outbox::storage::sqlite {

namespace {

/// Columns of sql::claim_candidates.
enum candidate_column {
  col_rowid,
  col_event_id,
  col_aggregate_id,
  col_seq,
  col_event_type,
  col_payload,
  col_status,
  col_lease_epoch,
  col_attempts,
  col_created_at,
  col_last_error,
  col_owner,
  col_headers,
};

/// A candidate row the claim decided to give up on.
struct give_up_decision {
  std::int64_t rowid = 0;
  /// What the relay's log line says about it; last_error is the reason.
  failed_row row;
};

std::string give_up_reason(bool expired, int attempts, int max_attempts,
                           const std::string& last_error) {
  if (expired)
    return "lease expired " + std::to_string(attempts) +
           " times without an acknowledgement (max_attempts " +
           std::to_string(max_attempts) + ")";
  auto reason = "gave up after " + std::to_string(attempts) +
                " attempts (max_attempts " + std::to_string(max_attempts) + ")";
  if (!last_error.empty())
    reason += "; last error: " + last_error;
  return reason;
}

/// The text of a column as a view, valid until the cursor moves.
std::string_view text_of(const SQLite::Column& column) {
  return {column.getText(), static_cast<std::size_t>(column.getBytes())};
}

/// The head-of-line rule for one claim. Seqs of an aggregate are contiguous
/// from 1, so "every lower seq is PUBLISHED or in this claim" means: the row
/// is the aggregate's lowest unpublished seq, or its predecessor was taken by
/// this claim.
class head_of_line {
public:
  explicit head_of_line(SQLite::Statement& head_seq) : head_seq_(head_seq) {}

  bool claimable(std::string_view aggregate_id, std::int64_t seq) {
    auto& state = find(aggregate_id, seq);
    if (state.last_taken != 0)
      return state.last_taken == seq - 1;
    return state.head == seq;
  }

  /// Must follow claimable(aggregate_id, seq) == true.
  void taken(std::string_view aggregate_id, std::int64_t seq) {
    aggregates_.find(aggregate_id)->second.last_taken = seq;
  }

private:
  struct aggregate {
    /// The lowest unpublished seq, as of the claim's start.
    std::int64_t head = 0;
    /// The highest seq taken by this claim (0: none).
    std::int64_t last_taken = 0;
  };

  aggregate& find(std::string_view aggregate_id, std::int64_t seq) {
    if (auto known = aggregates_.find(aggregate_id); known != aggregates_.end())
      return known->second;
    // The map's keys view these strings; a deque never moves its elements.
    const auto& id = ids_.emplace_back(aggregate_id);
    // A candidate is unpublished, so seq 1 is its aggregate's head: the
    // common case (an order's first event) costs no lookup.
    auto head = seq == 1 ? 1 : lowest_unpublished(id);
    return aggregates_.emplace(id, aggregate{head, 0}).first->second;
  }

  std::int64_t lowest_unpublished(const std::string& aggregate_id) {
    statement_use query{head_seq_};
    query->bindNoCopy(1, aggregate_id);
    query->executeStep();
    return query->getColumn(0).getInt64();
  }

  SQLite::Statement& head_seq_;
  std::deque<std::string> ids_;
  std::unordered_map<std::string_view, aggregate> aggregates_;
};

} // namespace

claim lease_store::claim_rows(const std::string& owner, millis now,
                              const lease_policy& policy) {
  claim result;
  result.owner = owner;
  result.lease_until = policy.lease_until(now);
  auto batch = static_cast<std::size_t>(policy.batch);
  auto bound = claim_scan_bound(policy);
  // A failed claim forgets where its walk was: the next one starts at the
  // oldest candidate.
  try {
    write_transaction(impl_->db, "claim", impl_->name, [&] {
      std::vector<give_up_decision> give_up;
      std::int64_t scanned = 0;
      std::int64_t last_scanned = 0;
      auto full = [&] {
        return result.events.size() + give_up.size() >= batch;
      };
      // Decide first, update after: changing rows while a cursor walks the
      // index they live in is undefined in SQLite. Skipped rows cost one step
      // and a hash lookup, without copying their text.
      head_of_line heads{impl_->head_seq};
      // Walks the candidates in (after, up_to] until the batch is full or
      // `budget` more rows were looked at. Returns whether it ran out of them.
      auto walk_range = [&](std::int64_t after, std::int64_t up_to,
                            std::int64_t budget) {
        statement_use walk{impl_->claim_candidates};
        walk->bind(1, now);
        walk->bind(2, after);
        walk->bind(3, up_to);
        for (auto end = scanned + budget; !full() && scanned < end;) {
          if (!walk->executeStep())
            return true;
          ++scanned;
          last_scanned = walk->getColumn(col_rowid).getInt64();
          auto aggregate_id = text_of(walk->getColumn(col_aggregate_id));
          auto seq = walk->getColumn(col_seq).getInt64();
          if (!heads.claimable(aggregate_id, seq))
            continue;
          auto expired = row_status_of(walk->getColumn(col_status).getText()) ==
                         row_status::sending;
          auto attempts = walk->getColumn(col_attempts).getInt();
          if (attempts >= policy.max_attempts) {
            // Not marked taken: the FAILED row now blocks its aggregate.
            give_up.push_back(
                {last_scanned,
                 {walk->getColumn(col_event_id).getString(),
                  std::string{aggregate_id}, seq,
                  walk->getColumn(col_event_type).getString(), attempts,
                  give_up_reason(expired, attempts, policy.max_attempts,
                                 walk->getColumn(col_last_error).getString()),
                  walk->getColumn(col_headers).getString()}});
            continue;
          }
          heads.taken(aggregate_id, seq);
          auto& event = result.events.emplace_back();
          event.rowid = last_scanned;
          event.event_id = walk->getColumn(col_event_id).getString();
          event.aggregate_id = aggregate_id;
          event.seq = seq;
          event.event_type = walk->getColumn(col_event_type).getString();
          event.payload = walk->getColumn(col_payload).getString();
          event.headers = walk->getColumn(col_headers).getString();
          event.epoch = walk->getColumn(col_lease_epoch).getInt64() + 1;
          event.attempts = attempts + 1;
          event.created_at = walk->getColumn(col_created_at).getInt64();
          event.taken_over = expired;
          if (expired)
            event.previous_owner = walk->getColumn(col_owner).getString();
        }
        return false;
      };
      // The walk is bounded: a long stretch of rows waiting behind other
      // leases would otherwise be stepped through by every claim. Where it
      // looks changes which rows are seen, never which are claimable: heads
      // come from the index, and an aggregate's rows are taken only from its
      // head on, in seq order. Rows beyond the bound stay candidates for later
      // claims. Once a walk is cut, the following ones spend half the bound on
      // the oldest candidates (heads just freed, released and backed-off rows)
      // and half resuming after the last row looked at, wrapping around at the
      // newest; so every candidate is looked at within 2 * candidates / bound
      // claims of this store.
      constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
      constexpr auto highest = std::numeric_limits<std::int64_t>::max();
      auto resume_after = impl_->resume_after;
      auto ran_out =
          walk_range(lowest, highest, resume_after == 0 ? bound : bound / 2);
      auto oldest_end = last_scanned;
      if (ran_out) {
        resume_after = 0;
      } else if (full()) {
        // The oldest rows filled the batch: the resume point stays.
      } else if (resume_after == 0) {
        resume_after = last_scanned;
      } else {
        auto from = std::max(resume_after, oldest_end);
        ran_out = walk_range(from, highest, bound - scanned);
        if (ran_out && !full() && scanned < bound && from > oldest_end)
          ran_out = walk_range(oldest_end, from, bound - scanned);
        resume_after = ran_out ? 0 : last_scanned;
      }
      impl_->resume_after = resume_after;
      result.more_candidates = scanned >= bound;
      result.scanned = scanned;
      for (auto& decision : give_up)
        impl_->give_up(decision.rowid, decision.row.last_error);
      {
        statement_use update{impl_->take};
        update->bindNoCopy(1, owner);
        update->bind(2, result.lease_until);
        update->bind(3, now);
        for (auto& event : result.events) {
          update->reset();
          update->bind(4, event.rowid);
          update->exec();
          result.taken_over += event.taken_over ? 1 : 0;
        }
      }
      result.failed = static_cast<int>(give_up.size());
      for (auto& decision : give_up)
        result.given_up.push_back(std::move(decision.row));
    });
  } catch (const store_error&) {
    impl_->resume_after = 0;
    throw;
  }
  return result;
}

} // namespace outbox::storage::sqlite
