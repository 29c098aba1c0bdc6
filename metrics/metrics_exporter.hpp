#pragma once

#include "metrics/pipeline_snapshot.hpp"
#include "metrics/run_metrics.hpp"

#include <prometheus/metric_family.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class CivetServer;
class CivetHandler;

namespace outbox::metrics {

/// Reads the stores' counts; called once per scrape, from the HTTP thread.
using snapshot_source = std::function<pipeline_snapshot()>;

/// The Prometheus families of one scrape: this process's counters and the
/// commit-to-processed latency from `metrics`, the stores' counts from
/// `snapshot` (left out, with outbox_probe_up 0, when it reports trouble).
std::vector<prometheus::MetricFamily>
collect_metric_families(const run_metrics& metrics,
                        const pipeline_snapshot& snapshot);

/// A probe of the process: "" when it holds, else why not (said in the
/// answer). Called from the HTTP threads, concurrently.
using health_check = std::function<std::string()>;

/// What /healthz and /readyz answer (an empty check always holds).
struct health_checks {
  /// /healthz: the process is alive (its supervision loop turns); a
  /// service manager restarts it when this fails.
  health_check alive;
  /// /readyz: it has started and reaches its database and Redis; a load
  /// balancer or an orchestrator routes nothing to it until it holds.
  health_check ready;
};

/// Serves http://host:port/metrics, /healthz and /readyz for one `outbox
/// run` or role. Values are read when asked for, so it needs no thread of
/// its own besides the HTTP server's.
class metrics_exporter {
public:
  /// Listens on `host`:`port` at once. Throws std::runtime_error if the
  /// address cannot be bound, naming why (a port in use says so).
  metrics_exporter(const std::string& host, std::uint16_t port,
                   std::shared_ptr<const run_metrics> metrics,
                   snapshot_source snapshot, health_checks checks = {});
  ~metrics_exporter();
  metrics_exporter(const metrics_exporter&) = delete;
  metrics_exporter& operator=(const metrics_exporter&) = delete;

  /// Where a scraper finds the metrics.
  std::string url() const;

private:
  std::string address_;
  std::vector<std::unique_ptr<CivetHandler>> handlers_;
  std::unique_ptr<CivetServer> server_;
};

} // namespace outbox::metrics
