#include "adapters/redis_ports.hpp"

#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"

#include <algorithm>

namespace outbox::adapters {

namespace {

class redis_publish_port : public actors::publish_port {
public:
  redis_publish_port(const broker::connection_options& redis,
                     const broker::keys& names)
      : conn_(redis), publisher_(conn_, names) {}

  void publish(const std::vector<broker::event_entry>& entries) override {
    publisher_.publish(entries);
  }

private:
  broker::connection conn_;
  broker::publisher publisher_;
};

/// The consumer's own limit, broker.max_consume_bytes, not the relay's
/// publishing limit: a relay may run with broker.max_entry_bytes raised
/// (to let a FAILED row through) while consumers keep the defaults, and
/// what they set aside cannot be replayed. An entry over it is dead-lettered
/// as the consumer pops it, keeping what the inbox keeps of a dead entry, or
/// less.
broker::oversized_entries oversized_of(const broker::keys& names) {
  broker::oversized_entries rule;
  rule.max_consume_bytes = names.max_consume_bytes;
  rule.dead_letter = names.dead_letter;
  rule.counters = names.counters;
  rule.max_kept = std::min(rule.max_kept, names.max_consume_bytes);
  return rule;
}

class redis_consume_port : public actors::consume_port {
public:
  redis_consume_port(const broker::connection_options& redis,
                     const broker::keys& names, const broker::fence& fenced_by,
                     const broker::inbox_options& options,
                     std::optional<consumer_sink> sink)
      : conn_(redis), queue_(conn_, fenced_by, oversized_of(names)),
        inbox_(conn_, names, fenced_by, options), counters_(names.counters) {
    if (sink)
      sink_ = std::make_unique<sink_applier>(std::move(*sink));
  }

  bool wait_for_doorbell(const std::vector<std::string>& doorbells,
                         int timeout_ms) override {
    return queue_.wait_for_doorbell(doorbells, timeout_ms);
  }

  broker::applied_entry apply(const std::string& entry) override {
    return apply_batch({entry}).front();
  }

  std::vector<std::string> pop_batch(const std::string& queue,
                                     const std::string& processing,
                                     std::size_t max_entries,
                                     std::size_t max_bytes) override {
    return queue_.pop_batch(queue, processing, max_entries, max_bytes);
  }

  std::vector<std::size_t> take_set_aside() override {
    return queue_.take_set_aside();
  }

  std::vector<broker::applied_entry>
  apply_batch(const std::vector<std::string>& entries) override {
    return sink_ ? sink_->apply_batch(inbox_, entries)
                 : inbox_.apply_batch(entries);
  }

  void on_sink_commit(std::function<void()> hook) override {
    if (sink_)
      sink_->on_commit(std::move(hook));
  }

  void remove(const std::string& processing,
              const std::string& entry) override {
    queue_.remove(processing, entry);
  }

  std::size_t remove_batch(const std::string& processing,
                           const std::vector<std::string>& entries) override {
    return queue_.remove_batch(processing, entries);
  }

  std::size_t recover(const std::string& processing,
                      const std::string& queue) override {
    return queue_.recover(processing, queue, counters_);
  }

private:
  broker::connection conn_;
  broker::reliable_queue queue_;
  broker::inbox inbox_;
  std::string counters_;
  std::unique_ptr<sink_applier> sink_;
};

} // namespace

std::unique_ptr<actors::publish_port>
make_redis_publish_port(const broker::connection_options& redis,
                        const broker::keys& names) {
  return std::make_unique<redis_publish_port>(redis, names);
}

std::unique_ptr<actors::consume_port> make_redis_consume_port(
    const broker::connection_options& redis, const broker::keys& names,
    const broker::fence& fenced_by, const broker::inbox_options& options,
    std::optional<consumer_sink> sink) {
  return std::make_unique<redis_consume_port>(redis, names, fenced_by, options,
                                              std::move(sink));
}

} // namespace outbox::adapters
