#include "metrics/run_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace outbox::metrics {

const std::vector<double>& latency_bucket_bounds() {
  static const std::vector<double> bounds{1,   2.5, 5,    10,   25,   50,   100,
                                          250, 500, 1000, 2500, 5000, 10000};
  return bounds;
}

latency_recorder::latency_recorder(std::size_t capacity)
    : buckets_(latency_bucket_bounds().size(), 0), capacity_(capacity) {
  samples_.reserve(std::min<std::size_t>(capacity, 4096));
}

void latency_recorder::record(double millis) {
  std::lock_guard<std::mutex> guard{mutex_};
  add(millis);
}

void latency_recorder::record_many(const std::vector<double>& millis) {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto m : millis)
    add(m);
}

void latency_recorder::add(double millis) {
  ++seen_;
  sum_ += millis;
  const auto& bounds = latency_bucket_bounds();
  auto bucket = std::lower_bound(bounds.begin(), bounds.end(), millis);
  if (bucket != bounds.end())
    ++buckets_[static_cast<std::size_t>(bucket - bounds.begin())];
  if (samples_.size() < capacity_) {
    samples_.push_back(millis);
    return;
  }
  // Reservoir sampling: every sample seen so far is kept with equal odds.
  std::uniform_int_distribution<std::int64_t> pick{0, seen_ - 1};
  auto slot = pick(random_);
  if (slot < static_cast<std::int64_t>(capacity_))
    samples_[static_cast<std::size_t>(slot)] = millis;
}

latency_summary latency_recorder::summary() const {
  std::vector<double> sorted;
  latency_summary result;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    sorted = samples_;
    result.samples = seen_;
    result.sum = sum_;
    result.cumulative = buckets_;
  }
  for (std::size_t i = 1; i < result.cumulative.size(); ++i)
    result.cumulative[i] += result.cumulative[i - 1];
  if (sorted.empty())
    return result;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) {
    auto rank = static_cast<std::size_t>(std::ceil(q * sorted.size()));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  result.p50 = at(0.50);
  result.p95 = at(0.95);
  result.p99 = at(0.99);
  return result;
}

} // namespace outbox::metrics
