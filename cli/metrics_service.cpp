#include "cli/metrics_service.hpp"

#include "adapters/pipeline_probe.hpp"

#include <utility>

namespace outbox::cli {

shared_probe::shared_probe(const config::settings& s)
    : port_(adapters::make_pipeline_probe(s)) {}

metrics::pipeline_snapshot shared_probe::snapshot() {
  std::lock_guard<std::mutex> guard{mutex_};
  return port_->snapshot();
}

std::string shared_probe::trouble() {
  std::lock_guard<std::mutex> guard{mutex_};
  return port_->drain_snapshot().trouble;
}

std::unique_ptr<metrics::metrics_exporter>
start_metrics(const metrics_listen& where, std::shared_ptr<shared_probe> probe,
              std::shared_ptr<const metrics::run_metrics> metrics,
              service_presence& presence) {
  return std::make_unique<metrics::metrics_exporter>(
      where.host, where.port, std::move(metrics),
      [probe] { return probe->snapshot(); }, presence.checks());
}

} // namespace outbox::cli
