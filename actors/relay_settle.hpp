#pragma once

// What a relay owes the database after a batch: the ack of rows Redis took
// and the hand-back of rows it did not. Kept in the relay's state when the
// database does not answer, and settled before the next claim, so an
// outage charges no row an attempt (see unsettled_batch).

#include "actors/relay_context.hpp"

namespace outbox::actors {

/// What a settle did.
struct settled {
  int acked = 0;
  int rejected = 0;
  int released = 0;
};

/// Settles relay.unsettled: hands back what Redis did not take, acks what it
/// took, then forgets it. Throws store_error, keeping what is left, while
/// the database is still away: the next cycle tries again before it claims.
settled settle(relay_context& relay);

/// Settles `batch` now, or as soon as the database answers (see above).
settled settle(relay_context& relay, unsettled_batch batch);

/// Settles what an outage left over, before anything new is claimed, and
/// says so once it has.
void settle_left_over(relay_context& relay);

} // namespace outbox::actors
