#include "cli/service_presence.hpp"

#include "cli/service_notify.hpp"

#include <cstdio>

namespace outbox::cli {

service_presence::service_presence(
    std::shared_ptr<const metrics::run_metrics> metrics,
    std::function<std::string()> stores)
    : metrics_(std::move(metrics)), stores_(std::move(stores)),
      moved_at_(std::chrono::steady_clock::now()) {}

service_presence::~service_presence() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    done_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable())
    watchdog_.join();
}

metrics::health_checks service_presence::checks() {
  return {[this] { return alive_trouble(); },
          [this] { return ready_trouble(); }};
}

void service_presence::started(const std::string& status) {
  started_ = true;
  notify_service_manager("READY=1\nSTATUS=" + status);
  if (auto every = watchdog_interval())
    watchdog_ = std::thread([this, every] { feed_watchdog(*every); });
}

void service_presence::stopping() {
  if (!stopping_.exchange(true))
    notify_service_manager("STOPPING=1");
}

std::string service_presence::alive_trouble() {
  auto now = std::chrono::steady_clock::now();
  // A run that stops has no more checks to count; it lives until it exits.
  if (metrics_->stopping.load(std::memory_order_relaxed) != 0) {
    stopping();
    return "";
  }
  std::lock_guard<std::mutex> guard{mutex_};
  auto checks = metrics_->supervisor_checks.load(std::memory_order_relaxed);
  if (checks != checks_seen_) {
    checks_seen_ = checks;
    moved_at_ = now;
    return "";
  }
  auto still = now - moved_at_;
  if (still < patience)
    return "";
  char text[128];
  std::snprintf(
      text, sizeof text,
      "stuck: the coordinator has not checked the pipeline for %.1f s",
      std::chrono::duration<double>(still).count());
  return text;
}

std::string service_presence::ready_trouble() {
  if (stopping_ || metrics_->stopping.load(std::memory_order_relaxed) != 0)
    return "stopping";
  if (!started_)
    return "starting";
  auto stores = stores_ ? stores_() : std::string{};
  return stores.empty() ? stores : "stores out of reach: " + stores;
}

void service_presence::feed_watchdog(std::chrono::milliseconds every) {
  // Four times per interval (sd_watchdog_enabled(3) asks for at least
  // two), so one late wake-up never misses the deadline; a stuck loop
  // stops the feeding and systemd restarts the service.
  std::unique_lock<std::mutex> lock{mutex_};
  while (!wake_.wait_for(lock, every / 4, [this] { return done_; })) {
    lock.unlock();
    if (alive_trouble().empty())
      notify_service_manager("WATCHDOG=1");
    lock.lock();
  }
}

} // namespace outbox::cli
