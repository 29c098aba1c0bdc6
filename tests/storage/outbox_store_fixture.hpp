#pragma once

// The outbox stores on a migrated database of either backend, with a small
// lease policy (short ttl, few attempts, quick backoff) so that leases
// expire and rows fail within a few steps of the manual clock.

#include "storage/order_store.hpp"
#include "support/outbox_stores.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace outbox::test {

class outbox_store_fixture : public contract_fixture {
protected:
  outbox_store_fixture() {
    policy_.ttl = 10;
    policy_.batch = 100;
    policy_.max_attempts = 3;
    policy_.backoff_base = 100;
    policy_.backoff_max = 1000;
  }

  using strings = std::vector<std::string>;

  /// Appends one event to `aggregate_id` (at time 0); returns its event_id.
  std::string append(const std::string& aggregate_id) {
    return orders_->append_event({aggregate_id, "Happened", "{}"}, 0).event_id;
  }

  /// Appends one event to each of `aggregate_ids`, in turn.
  void append_all(std::initializer_list<const char*> aggregate_ids) {
    for (const auto* aggregate_id : aggregate_ids)
      append(aggregate_id);
  }

  /// "aggregate:seq" of each claimed event, in claim order.
  static strings keys(const storage::claim& c) {
    strings result;
    for (const auto& event : c.events)
      result.push_back(event.aggregate_id + ":" + std::to_string(event.seq));
    return result;
  }

  /// `name` of the event's outbox row as text ("NULL" for NULL; times in
  /// ms).
  std::string column(const std::string& event_id, const std::string& name) {
    return text("SELECT " + sql_->as_text(name) +
                " FROM outbox WHERE event_id = '" + event_id + "'");
  }

  storage::lease_policy policy_;
  std::unique_ptr<storage::order_store> orders_ = db_->orders();
  outbox_stores outbox_{*db_};
};

} // namespace outbox::test
