#pragma once

#include "config/settings.hpp"

#include <cstdint>
#include <random>
#include <string>

namespace outbox::actors {

/// The places where a run can be told to break (config section "crash").
enum class crash_point {
  /// The relay dies holding fresh leases: they expire, another relay takes
  /// the rows over.
  relay_after_claim,
  /// The relay dies after the broker accepted the batch, before the ack:
  /// the rows are published again after takeover (duplicates).
  relay_after_publish,
  /// The relay freezes past its lease, then carries on as a zombie: its late
  /// ack must be rejected by the fence.
  relay_pause,
  /// The consumer dies with the entry in its processing list.
  consumer_after_pop,
  /// The consumer dies after the effect, before removing the entry: the
  /// recovered entry is a duplicate the inbox must absorb.
  consumer_after_effect,
  /// The consumer dies after its own database (consumer.sink) committed a
  /// batch's effects, before Redis recorded them: the redelivered entries
  /// are absorbed by the sink's inbox rows. Rolled per batch that reaches
  /// the sink.
  consumer_after_sink_commit,
};

/// Rolls the dice for crash points. Each actor instance gets its own stream
/// derived from the run's seed and the actor's name, so a run with the same
/// seed and names crashes at the same places.
class crash_injector {
public:
  crash_injector(const config::crash_settings& settings,
                 const std::string& actor_name);

  /// True when the actor should break at `point` now.
  bool strikes(crash_point point);

private:
  double probability(crash_point point) const;

  config::crash_settings settings_;
  std::mt19937_64 random_;
};

} // namespace outbox::actors
