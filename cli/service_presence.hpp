#pragma once

// How a long-running `outbox run` or role shows a service manager and an
// orchestrator that it lives: /healthz and /readyz on the metrics listener
// (metrics_exporter.hpp), and READY=1, WATCHDOG=1 and STOPPING=1 to
// systemd (service_notify.hpp). docs/run.md says what each tells.

#include "metrics/metrics_exporter.hpp"
#include "metrics/run_metrics.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace outbox::cli {

class service_presence {
public:
  /// `stores` says what keeps the database or Redis out of reach ("" when
  /// both answer); called for /readyz, from the HTTP threads.
  service_presence(std::shared_ptr<const metrics::run_metrics> metrics,
                   std::function<std::string()> stores);
  ~service_presence();
  service_presence(const service_presence&) = delete;
  service_presence& operator=(const service_presence&) = delete;

  /// The checks for the metrics listener; valid while this lives.
  metrics::health_checks checks();

  /// The pipeline runs: READY=1 (with `status` as STATUS=), /readyz may
  /// hold, and the watchdog, when systemd keeps one, is fed from now on.
  void started(const std::string& status);

  /// A graceful stop began: STOPPING=1, /readyz fails from now on.
  void stopping();

  /// "" while the coordinator's checks keep coming, else how long they
  /// have not (a stuck process: /healthz fails, the watchdog starves).
  std::string alive_trouble();

  /// "" once started, not stopping, and both stores answer; else why not.
  std::string ready_trouble();

  /// How long the checks may pause before the process counts as stuck:
  /// past two store calls cut off by a network failure (each bounded by
  /// its connect or I/O timeout, 15 s at most), which the coordinator
  /// waits out inline.
  static constexpr std::chrono::seconds patience{30};

private:
  void feed_watchdog(std::chrono::milliseconds every);

  std::shared_ptr<const metrics::run_metrics> metrics_;
  std::function<std::string()> stores_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::int64_t checks_seen_ = -1;
  std::chrono::steady_clock::time_point moved_at_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread watchdog_;
};

} // namespace outbox::cli
