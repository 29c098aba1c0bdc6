#pragma once

// The outbox store on a migrated database with a small lease policy (short
// ttl, few attempts, quick backoff) so that leases expire and rows fail
// within a few steps of the manual clock.

#include "storage/sqlite/order_store.hpp"
#include "storage_fixture.hpp"
#include "support/outbox_tables.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace outbox::test {

class outbox_store_fixture : public storage_fixture {
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
    return orders_.append_event({aggregate_id, "Happened", "{}"}, 0).event_id;
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

  std::string column(const std::string& event_id, const std::string& name) {
    return text("SELECT COALESCE(" + name +
                ", 'NULL') FROM outbox"
                " WHERE event_id = '" +
                event_id + "'");
  }

  storage::lease_policy policy_;
  storage::sqlite::order_store orders_{*db_};
  test::outbox_tables outbox_{*db_};
};

} // namespace outbox::test
