#pragma once

#include "metrics/pipeline_snapshot.hpp"
#include "metrics/run_metrics.hpp"

#include <prometheus/metric_family.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace prometheus {
class Collectable;
class Exposer;
} // namespace prometheus

namespace outbox::metrics {

/// Reads the stores' counts; called once per scrape, from the HTTP thread.
using snapshot_source = std::function<pipeline_snapshot()>;

/// The Prometheus families of one scrape: this process's counters and the
/// commit-to-processed latency from `metrics`, the stores' counts from
/// `snapshot` (left out, with outbox_probe_up 0, when it reports trouble).
std::vector<prometheus::MetricFamily>
collect_metric_families(const run_metrics& metrics,
                        const pipeline_snapshot& snapshot);

/// Serves http://host:port/metrics for one `outbox run`. Values are read
/// when scraped, so it needs no thread of its own besides the HTTP server's.
class metrics_exporter {
public:
  /// Listens on `host`:`port` at once. Throws std::runtime_error if the
  /// address cannot be bound.
  metrics_exporter(const std::string& host, std::uint16_t port,
                   std::shared_ptr<const run_metrics> metrics,
                   snapshot_source snapshot);
  ~metrics_exporter();
  metrics_exporter(const metrics_exporter&) = delete;
  metrics_exporter& operator=(const metrics_exporter&) = delete;

  /// Where a scraper finds the metrics.
  std::string url() const;

private:
  std::string address_;
  std::shared_ptr<prometheus::Collectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

} // namespace outbox::metrics
