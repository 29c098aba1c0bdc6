#pragma once

#include "tests/cli/cli_fixture.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "broker/keys.hpp"
#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"
#include "config/settings.hpp"
#include "storage/sqlite/database.hpp"
#include "support/outbox_tables.hpp"
#include "support/pipeline_keys.hpp"
#include "support/redis_server.hpp"

#include <string>
#include <vector>

namespace outbox::test {

/// status, verify and retry against a private Redis. The relay and consumer
/// steps are done here with the library, one batch each, so the binary sees
/// a real pipeline's state.
class CliAudit : public cli_fixture {
protected:
  process_result outbox_r(std::vector<std::string> args) {
    return outbox(std::move(args), {"--redis", redis_.endpoint().to_string()});
  }

  void place(const std::string& sku, int qty) {
    auto r =
        outbox({"place-order", "--sku", sku, "--qty", std::to_string(qty)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  /// Claims the one unpublished row and fails it with `error`, as a relay
  /// would with lease.max_attempts 1: the row ends FAILED. Its event_id, or
  /// empty (and a test failure) when there was not exactly one row.
  std::string fail_next_row(const std::string& error) {
    auto db = storage::sqlite::open_and_migrate({db_path(), 1000, "NORMAL"});
    test::outbox_tables store{*db};
    storage::lease_policy policy;
    policy.max_attempts = 1;
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("r", now, policy);
    if (claimed.events.size() != 1) {
      ADD_FAILURE() << "expected one row to claim, got "
                    << claimed.events.size();
      return "";
    }
    store.fail("r", claimed.leases(), error, now, policy);
    return claimed.events[0].event_id;
  }

  /// One relay pass: claim everything, publish, ack.
  void relay_all() {
    auto db = storage::sqlite::open_and_migrate({db_path(), 1000, "NORMAL"});
    test::outbox_tables store{*db};
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("test-relay", now, {});
    std::vector<broker::event_entry> entries;
    for (const auto& e : claimed.events)
      entries.push_back(
          {e.event_id, e.aggregate_id, e.seq, e.event_type, e.payload, now});
    broker::publisher{conn_, names_}.publish(entries);
    auto acked = store.ack("test-relay", claimed.leases(), now);
    ASSERT_TRUE(acked.rejected.empty());
  }

  /// Claims every unpublished row for `owner`, now, with a lease of
  /// `ttl_ms`, as a relay would and leaves them SENDING.
  void claim_all(const std::string& owner, storage::millis ttl_ms) {
    auto db = storage::sqlite::open_and_migrate({db_path(), 1000, "NORMAL"});
    test::outbox_tables store{*db};
    storage::lease_policy policy;
    policy.ttl = ttl_ms;
    auto claimed = store.claim_batch(owner, storage::wall_clock_now(), policy);
    ASSERT_FALSE(claimed.events.empty());
  }

  /// One consumer pass: pop, apply, remove until the queue is empty.
  void consume_all() {
    broker::reliable_queue queue{conn_};
    broker::inbox inbox{conn_, names_};
    for (std::size_t p = 0; p < names_.partitions; ++p) {
      auto list = names_.partition(p);
      auto processing = names_.processing_for(list, "test-consumer");
      while (auto entry = queue.pop(list, processing, 0)) {
        inbox.apply(*entry);
        queue.remove(processing, *entry);
      }
    }
  }

  redis_server redis_;
  // The binary runs with the default settings: same key layout here.
  broker::keys names_ = default_pipeline_keys();
  broker::connection conn_{redis_.connection_options()};
};

} // namespace outbox::test
