#pragma once

// The consumer's consume_port (actors/ports.hpp) on a fake_broker.

#include "actors/ports.hpp"
#include "broker/entry.hpp"
#include "tests/actors/fake_broker.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

/// A consume_port on a fake_broker, with the reliable queue's and the inbox
/// script's semantics: pop moves head to processing tail (a batch up to its
/// entry and byte caps, one entry at least), apply dedups by event_id then
/// applies the effect and checks seq order, malformed entries are
/// dead-lettered, remove drops the oldest copy, recover puts in-flight
/// entries back at the queue's head in their order.
class fake_consume_port : public actors::consume_port {
public:
  explicit fake_consume_port(std::shared_ptr<fake_broker> broker);

  /// Never waits: rings when a list behind one of the doorbells has entries.
  bool wait_for_doorbell(const std::vector<std::string>& doorbells,
                         int timeout_ms) override;
  std::vector<std::string> pop_batch(const std::string& queue,
                                     const std::string& processing,
                                     std::size_t max_entries,
                                     std::size_t max_bytes) override;
  broker::applied_entry apply(const std::string& entry) override;
  std::vector<broker::applied_entry>
  apply_batch(const std::vector<std::string>& entries) override;
  void remove(const std::string& processing, const std::string& entry) override;
  std::size_t remove_batch(const std::string& processing,
                           const std::vector<std::string>& entries) override;
  std::size_t recover(const std::string& processing,
                      const std::string& queue) override;

private:
  /// Throws if a pop failure is due (after the move, as a lost reply).
  void throw_if_fenced();
  void maybe_fail_pop();
  /// Throws if an apply failure is due (before anything is applied).
  void maybe_fail_apply();
  /// Throws if a remove failure is due (before anything is removed).
  void maybe_fail_remove();
  /// One entry through the inbox logic, no failure injection.
  broker::applied_entry apply_one(const std::string& entry);
  /// LREM processing 1 entry; whether it was there.
  bool remove_one(const std::string& processing, const std::string& entry);

  std::shared_ptr<fake_broker> broker_;
};

/// A consumer_setup::make_port that hands out ports on `broker`.
std::function<std::unique_ptr<actors::consume_port>()>
fake_consume_port_factory(std::shared_ptr<fake_broker> broker);

} // namespace outbox::test
