#pragma once

// What a relay does when Redis refuses a batch (WRONGTYPE, OOM, an entry
// over the size limit): find the rows it refuses, charge only them an
// attempt, keep their aggregates in order, publish everything else.

#include "actors/relay_context.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry.hpp"
#include "storage/types.hpp"

#include <set>
#include <string>
#include <vector>

namespace outbox::actors {

/// The claimed rows as queue entries, published at `now`.
std::vector<broker::event_entry> to_entries(const storage::claim& c,
                                            storage::millis now);

/// The claim minus the rows whose event_id is in `excluded`.
storage::claim claim_without(const storage::claim& c,
                             const std::set<std::string>& excluded);

/// Redis refused the batch with `first`. Find the rows it refuses by
/// publishing one row at a time, so only they pay an attempt; the later
/// rows of their aggregate are handed back unpublished (order), every other
/// aggregate goes through. Returns the claim of what was published. Throws
/// broker_error: unavailable when Redis goes away meanwhile; rejected, with
/// Redis's words, when it refuses the command itself (an ACL, a proxy:
/// broker::refuses_the_command) or refused every row with the same error
/// that is not about an entry. No row is charged then, and the refusal is
/// noted in the run's refusal log: waiting does not end it, so a bounded
/// run it holds up stalls and names it. Throws storage::store_error when
/// the database does not take the outcome: relay.unsettled then keeps it (the
/// rows pushed to ack, the others to hand back) for the next cycle.
storage::claim isolate_refused(relay_context& relay, const storage::claim& c,
                               storage::millis now,
                               const broker::broker_error& first);

} // namespace outbox::actors
