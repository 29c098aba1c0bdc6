#pragma once

// A consumer whose effects run in its own database (consumer.sink,
// docs/events.md "Effects in your database"). Per batch: the inbox says which
// entries are new (broker::inbox::classify); the sink applies those of its
// event types in one transaction with their inbox rows; then the inbox records
// the whole batch, setting aside the entries whose effect the sink refused. A
// crash anywhere leaves the batch in the processing list: applied again, the
// sink's inbox rows absorb what it committed, and the inbox records it.

#include "broker/inbox.hpp"
#include "sink/sink.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::adapters {

/// Chosen and checked before the consumers start (startup/sink_preflight).
using sink::consumer_sink;

class sink_applier {
public:
  explicit sink_applier(consumer_sink settings);

  /// Applies `entries` through `inbox` and the sink, as above. Throws
  /// actors::effects_unavailable when the sink cannot take them now,
  /// broker_error as the inbox does.
  std::vector<broker::applied_entry>
  apply_batch(broker::inbox& inbox, const std::vector<std::string>& entries);

  /// Called after each commit of the sink, before Redis records the batch
  /// (actors::consume_port::on_sink_commit).
  void on_commit(std::function<void()> hook) { on_commit_ = std::move(hook); }

private:
  /// The sink, opened at first use and again after it failed to open.
  sink::sink& opened();

  consumer_sink settings_;
  std::unique_ptr<sink::sink> sink_;
  std::function<void()> on_commit_;
};

} // namespace outbox::adapters
