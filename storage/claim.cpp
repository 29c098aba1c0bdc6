// outbox_store::claim_batch: the lease protocol's claim with its head-of-line
// rule (DESIGN.md, "Lease protocol").

#include "storage/outbox_store.hpp"

#include "storage/outbox_store_impl.hpp"
#include "storage/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <unordered_map>

namespace outbox::storage {

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
};

/// A candidate row the claim decided to take or to give up on.
struct decision {
  std::int64_t rowid = 0;
  claimed_event event;
  std::string give_up_reason;
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

/// The head-of-line rule for one claim. Seqs of an aggregate are contiguous
/// from 1, so "every lower seq is PUBLISHED or in this claim" means: the row
/// is the aggregate's lowest unpublished seq, or its predecessor was taken by
/// this claim.
class head_of_line {
public:
  explicit head_of_line(SQLite::Statement& head_seq) : head_seq_(head_seq) {}

  bool claimable(const std::string& aggregate_id, std::int64_t seq) {
    if (auto taken = last_taken_.find(aggregate_id); taken != last_taken_.end())
      return taken->second == seq - 1;
    return head(aggregate_id) == seq;
  }

  void taken(const std::string& aggregate_id, std::int64_t seq) {
    last_taken_[aggregate_id] = seq;
  }

private:
  std::int64_t head(const std::string& aggregate_id) {
    if (auto cached = heads_.find(aggregate_id); cached != heads_.end())
      return cached->second;
    detail::statement_use query{head_seq_};
    query->bind(1, aggregate_id);
    query->executeStep();
    auto seq = query->getColumn(0).getInt64();
    heads_.emplace(aggregate_id, seq);
    return seq;
  }

  SQLite::Statement& head_seq_;
  /// The lowest unpublished seq per aggregate, as of the claim's start.
  std::unordered_map<std::string, std::int64_t> heads_;
  /// The highest seq per aggregate taken by this claim.
  std::unordered_map<std::string, std::int64_t> last_taken_;
};

} // namespace

claim outbox_store::claim_batch(const std::string& owner, millis now,
                                const lease_policy& policy) {
  detail::check_owner(owner);
  detail::check_policy(policy);
  claim result;
  result.owner = owner;
  result.lease_until = now + policy.ttl;
  try {
    SQLite::Transaction transaction(impl_->db,
                                    SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<decision> take;
    std::vector<decision> give_up;
    {
      // Decide first, update after: changing rows while a cursor walks the
      // index they live in is undefined in SQLite. Skipped rows cost one
      // step and a hash lookup; only decided rows are kept in memory.
      head_of_line heads{impl_->head_seq};
      detail::statement_use walk{impl_->claim_candidates};
      walk->bind(1, now);
      auto decided = [&] { return take.size() + give_up.size(); };
      while (decided() < static_cast<std::size_t>(policy.batch) &&
             walk->executeStep()) {
        auto aggregate_id = walk->getColumn(col_aggregate_id).getString();
        auto seq = walk->getColumn(col_seq).getInt64();
        if (!heads.claimable(aggregate_id, seq))
          continue;
        decision row;
        row.rowid = walk->getColumn(col_rowid).getInt64();
        auto expired = walk->getColumn(col_status).getString() == "SENDING";
        auto attempts = walk->getColumn(col_attempts).getInt();
        if (attempts >= policy.max_attempts) {
          // Not marked taken: the FAILED row now blocks its aggregate.
          row.give_up_reason =
              give_up_reason(expired, attempts, policy.max_attempts,
                             walk->getColumn(col_last_error).getString());
          give_up.push_back(std::move(row));
          continue;
        }
        heads.taken(aggregate_id, seq);
        auto& event = row.event;
        event.event_id = walk->getColumn(col_event_id).getString();
        event.aggregate_id = std::move(aggregate_id);
        event.seq = seq;
        event.event_type = walk->getColumn(col_event_type).getString();
        event.payload = walk->getColumn(col_payload).getString();
        event.epoch = walk->getColumn(col_lease_epoch).getInt64() + 1;
        event.attempts = attempts + 1;
        event.created_at = walk->getColumn(col_created_at).getInt64();
        event.taken_over = expired;
        take.push_back(std::move(row));
      }
    }
    for (auto& row : give_up)
      impl_->give_up(row.rowid, row.give_up_reason);
    for (auto& row : take) {
      detail::statement_use update{impl_->take};
      update->bind(1, owner);
      update->bind(2, result.lease_until);
      update->bind(3, row.rowid);
      update->exec();
      result.taken_over += row.event.taken_over ? 1 : 0;
      result.events.push_back(std::move(row.event));
    }
    result.failed = static_cast<int>(give_up.size());
    transaction.commit();
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("claim", impl_->name);
  }
  return result;
}

} // namespace outbox::storage
