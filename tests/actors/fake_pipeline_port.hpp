#pragma once

// The coordinator's pipeline_port (actors/ports.hpp) on a fake_pipeline:
// its snapshots, the consumers' lock, recovery and the audit.

#include "actors/ports.hpp"
#include "broker/keys.hpp"
#include "metrics/pipeline_snapshot.hpp"
#include "tests/actors/fake_broker.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

/// What a fake_pipeline_port reports, and what the coordinator asked of it.
struct fake_pipeline {
  /// What snapshot() returns, unless `source` is set.
  metrics::pipeline_snapshot snapshot;
  /// Computes the snapshot instead (e.g. from the test's database).
  std::function<metrics::pipeline_snapshot()> source;
  int snapshots = 0;
  /// drain_snapshot() calls: the same figures, reduced as the real probe's
  /// are (whether any row is PENDING or SENDING, Redis's counts).
  int drain_reads = 0;
  /// Whether the fake's database has a change mark (SQLite's data_version;
  /// false: as PostgreSQL, which has none).
  bool marked = true;
  /// Every recover_consumer argument, in order.
  std::vector<std::string> recovered_consumers;
  /// Called by recover_consumer (with its argument) before it recovers.
  std::function<void(const std::string&)> on_recover_consumer;
  int recover_all_calls = 0;
  /// The lock token every recovery carried, in order ("" for none). A
  /// recovery with a token other than `lock_holder` is refused list by
  /// list (broker_error fenced), as the fenced recover script would.
  std::vector<std::string> recovery_tokens;
  /// What audit() returns.
  metrics::audit_verdict verdict;
  /// How many audit() calls throw broker_error(unavailable) first.
  int audit_outages = 0;
  /// Who holds the consumers' lock ("" for nobody); ttls are not modelled.
  std::string lock_holder;
  /// acquire and renew throw broker_error(unavailable) while set.
  bool lock_unreachable = false;
  int lock_releases = 0;
  /// Every relay heartbeat: {process, relays}; -1 relays for "stopped".
  std::vector<std::pair<std::string, int>> relay_notes;
  int audits = 0;
  /// Where recovery moves processing lists back (none: count calls only),
  /// and the key names that say which lists those are.
  std::shared_ptr<fake_broker> broker;
  broker::keys names;
};

/// A pipeline_port on a fake_pipeline.
class fake_pipeline_port : public actors::pipeline_port {
public:
  explicit fake_pipeline_port(std::shared_ptr<fake_pipeline> pipeline);

  metrics::pipeline_snapshot snapshot() override;
  metrics::pipeline_snapshot drain_snapshot() override;
  std::size_t recover_consumer(const std::string& consumer,
                               const std::string& token,
                               const recovery_step& step) override;
  std::size_t recover_all(const std::string& token,
                          const recovery_step& step) override;
  metrics::audit_verdict audit() override;
  std::string acquire_consumer_lock(const std::string& token,
                                    std::int64_t ttl_ms) override;
  std::string renew_consumer_lock(const std::string& token,
                                  std::int64_t ttl_ms) override;
  void release_consumer_lock(const std::string& token) override;
  void note_relays(const std::string& process, int relays,
                   std::int64_t ttl_ms) override;
  void relays_stopped(const std::string& process) override;

private:
  /// Recovers the processing lists whose consumer name passes `match`, in
  /// name order, each under the fence of `token`.
  std::size_t recover_if(const std::function<bool(const std::string&)>& match,
                         const std::string& token, const recovery_step& step);

  std::shared_ptr<fake_pipeline> pipeline_;
};

/// A coordinator_setup::make_probe that hands out ports on `pipeline`.
std::function<std::unique_ptr<actors::pipeline_port>()>
fake_probe_factory(std::shared_ptr<fake_pipeline> pipeline);

} // namespace outbox::test
