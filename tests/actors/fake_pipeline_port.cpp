#include "tests/actors/fake_pipeline_port.hpp"

#include "broker/broker_error.hpp"

#include <string>
#include <utility>

namespace outbox::test {

fake_pipeline_port::fake_pipeline_port(std::shared_ptr<fake_pipeline> pipeline)
    : pipeline_(std::move(pipeline)) {}

namespace {

/// The fake's database as its snapshot shows it, with a change mark that
/// moves whenever its counts do (as a commit moves the real one); a test
/// may move it alone through database_mark.
metrics::pipeline_snapshot with_change_mark(metrics::pipeline_snapshot s,
                                            bool marked) {
  if (!marked) {
    s.database_mark.reset();
    return s;
  }
  // Unsigned: a hash that wraps, which signed overflow may not.
  auto mark = static_cast<std::uint64_t>(s.database_mark.value_or(0));
  for (auto n :
       {s.orders, s.outbox_rows, s.pending, s.sending, s.published, s.failed})
    mark = mark * 1'000'003u + static_cast<std::uint64_t>(n);
  s.database_mark = static_cast<std::int64_t>(mark >> 1);
  return s;
}

} // namespace

metrics::pipeline_snapshot fake_pipeline_port::snapshot() {
  ++pipeline_->snapshots;
  return with_change_mark(pipeline_->source ? pipeline_->source()
                                            : pipeline_->snapshot,
                          pipeline_->marked);
}

metrics::pipeline_snapshot fake_pipeline_port::drain_snapshot() {
  ++pipeline_->drain_reads;
  auto full = with_change_mark(pipeline_->source ? pipeline_->source()
                                                 : pipeline_->snapshot,
                               pipeline_->marked);
  metrics::pipeline_snapshot drain;
  drain.pending = full.pending + full.sending > 0 ? 1 : 0;
  drain.database_mark = full.database_mark;
  metrics::copy_redis_figures(full, drain);
  drain.trouble = full.trouble;
  drain.database_answered = full.database_answered;
  drain.redis_answered = full.redis_answered;
  drain.outage = full.outage;
  return drain;
}

std::size_t fake_pipeline_port::recover_consumer(const std::string& consumer,
                                                 const std::string& token,
                                                 const recovery_step& step) {
  pipeline_->recovered_consumers.push_back(consumer);
  pipeline_->recovery_tokens.push_back(token);
  if (pipeline_->on_recover_consumer)
    pipeline_->on_recover_consumer(consumer);
  return recover_if([&](const std::string& name) { return name == consumer; },
                    token, step);
}

std::size_t fake_pipeline_port::recover_all(const std::string& token,
                                            const recovery_step& step) {
  ++pipeline_->recover_all_calls;
  pipeline_->recovery_tokens.push_back(token);
  return recover_if([](const std::string&) { return true; }, token, step);
}

metrics::audit_verdict fake_pipeline_port::audit() {
  ++pipeline_->audits;
  if (pipeline_->audit_outages > 0) {
    --pipeline_->audit_outages;
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "Redis at 127.0.0.1:1 failed during HSCAN: "
                               "Connection reset by peer");
  }
  return pipeline_->verdict;
}

std::string fake_pipeline_port::acquire_consumer_lock(const std::string& token,
                                                      std::int64_t) {
  if (pipeline_->lock_unreachable)
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake: Redis unreachable");
  if (pipeline_->lock_holder.empty())
    pipeline_->lock_holder = token;
  return pipeline_->lock_holder;
}

std::string fake_pipeline_port::renew_consumer_lock(const std::string&,
                                                    std::int64_t) {
  if (pipeline_->lock_unreachable)
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake: Redis unreachable");
  return pipeline_->lock_holder;
}

void fake_pipeline_port::release_consumer_lock(const std::string& token) {
  ++pipeline_->lock_releases;
  if (pipeline_->lock_holder == token)
    pipeline_->lock_holder.clear();
}

void fake_pipeline_port::note_relays(const std::string& process, int relays,
                                     std::int64_t) {
  pipeline_->relay_notes.emplace_back(process, relays);
}

void fake_pipeline_port::relays_stopped(const std::string& process) {
  pipeline_->relay_notes.emplace_back(process, -1);
}

std::size_t fake_pipeline_port::recover_if(
    const std::function<bool(const std::string&)>& match,
    const std::string& token, const recovery_step& step) {
  auto check_fence = [&] {
    if (!token.empty() && pipeline_->lock_holder != token)
      throw broker::broker_error(broker::broker_errc::fenced,
                                 "OUTBOX_FENCED fake: the lock is " +
                                     pipeline_->lock_holder + "'s, not " +
                                     token + "'s");
  };
  if (!pipeline_->broker) {
    check_fence(); // the real port makes one script call at least
    return 0;
  }
  // Collect first: recovering inserts into the map being walked.
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& item : pipeline_->broker->lists) {
    const auto& list = item.first;
    auto queue = pipeline_->names.queue_of(list);
    auto slash = list.rfind('/');
    if (queue && slash != std::string::npos && match(list.substr(slash + 1)))
      found.emplace_back(list, *queue);
  }
  // The pipeline's fence is its lock token, not the consumers' flag.
  if (found.empty())
    check_fence();
  std::size_t moved = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    check_fence();
    auto here = pipeline_->broker->move_back(found[i].first, found[i].second);
    moved += here;
    if (step)
      step(here, found.size() - i - 1);
  }
  return moved;
}

std::function<std::unique_ptr<actors::pipeline_port>()>
fake_probe_factory(std::shared_ptr<fake_pipeline> pipeline) {
  return [pipeline] { return std::make_unique<fake_pipeline_port>(pipeline); };
}

} // namespace outbox::test
