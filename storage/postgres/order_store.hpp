#pragma once

#include "storage/event_ids.hpp"
#include "storage/order_store.hpp"

namespace outbox::storage::postgres {

class session;

/// Orders, request keys and outbox rows on PostgreSQL: each call one
/// transaction, always committed durably (synchronous_commit on, whatever
/// the session's setting). An aggregate's seq comes from outbox_append,
/// under the aggregate's row lock in aggregate_heads.
class order_store final : public storage::order_store {
public:
  explicit order_store(session& link) : link_(link) {}

  placed_order place_order(const order_request& request, millis now) override;
  std::vector<placed_order>
  place_orders(const std::vector<order_request>& requests, millis now) override;
  appended_event append_event(const event_request& request,
                              millis now) override;
  std::vector<appended_event>
  append_events(const std::vector<event_request>& requests,
                millis now) override;
  void set_before_commit(std::function<void()> hook) override {
    before_commit_ = std::move(hook);
  }

private:
  placed_order place(const order_request& request, millis now);
  /// One transaction; `keyed`: every request carries a request key (what
  /// the message after a lost COMMIT may promise).
  template <class Result, class Write>
  std::vector<Result> write_group(const char* context, std::size_t count,
                                  bool keyed, Write write);
  bool old_session_gone();
  bool committed(const std::string& event_id);

  session& link_;
  event_id_source event_ids_;
  std::function<void()> before_commit_;
};

} // namespace outbox::storage::postgres
