#pragma once

// The /metrics, /healthz and /readyz listener of a long-running process,
// over the stores as it reads them on connections of its own.

#include "actors/ports.hpp"
#include "cli/metrics_listen.hpp"
#include "cli/service_presence.hpp"
#include "config/settings.hpp"
#include "metrics/metrics_exporter.hpp"
#include "metrics/run_metrics.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace outbox::cli {

/// The stores as the metrics listener reads them, on connections of its
/// own: scrapes and readiness checks may overlap, and a probe's connections
/// are not thread-safe.
class shared_probe {
public:
  explicit shared_probe(const config::settings& s);

  metrics::pipeline_snapshot snapshot();

  /// What keeps a store out of reach, "" when both answer: the constant-time
  /// read the coordinator makes between two full counts.
  std::string trouble();

private:
  std::mutex mutex_;
  std::unique_ptr<actors::pipeline_port> port_;
};

/// /metrics, /healthz and /readyz on `where`. Throws std::runtime_error if
/// the port cannot be bound.
std::unique_ptr<metrics::metrics_exporter>
start_metrics(const metrics_listen& where, std::shared_ptr<shared_probe> probe,
              std::shared_ptr<const metrics::run_metrics> metrics,
              service_presence& presence);

} // namespace outbox::cli
