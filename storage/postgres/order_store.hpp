#pragma once

#include "storage/event_ids.hpp"
#include "storage/order_store.hpp"
#include "storage/trace_context.hpp"

namespace outbox::storage::postgres {

class session;
struct backend_identity;

/// Orders, request keys and outbox rows on PostgreSQL: each call one
/// transaction, always committed durably (synchronous_commit on, whatever
/// the session's setting). An aggregate's seq comes from outbox_append,
/// under the aggregate's row lock in aggregate_heads.
class order_store final : public storage::order_store {
public:
  explicit order_store(session& link) : link_(link) {}

  std::vector<placed_order>
  place_orders(const std::vector<order_request>& requests, millis now) override;
  std::vector<appended_event>
  append_events(const std::vector<event_request>& requests,
                millis now) override;
  void set_before_commit(std::function<void()> hook) override {
    before_commit_ = std::move(hook);
  }
  lost_commits lost_commit_outcomes() const override { return lost_; }

private:
  placed_order place(const order_request& request, millis now);
  /// Every request of a group in one statement (place_orders), then one at
  /// a time those it did not write (their keys were taken before). `order`
  /// is the requests' positions in their keys' order.
  void place_group(const std::vector<order_request>& requests,
                   const std::vector<std::size_t>& order, millis now,
                   std::vector<placed_order>& out);
  /// One event through append_event (its own statement).
  appended_event append(const event_request& request,
                        const std::string& event_id, const std::string& headers,
                        millis now);
  /// Every event of a group in one statement (append_events), then one at
  /// a time those it did not write (ids there already). `order` is the
  /// events' positions in their aggregates' order.
  void append_group(const std::vector<event_request>& requests,
                    const std::vector<std::size_t>& order, millis now,
                    std::vector<appended_event>& out);
  /// One transaction. A COMMIT whose answer was lost is looked up: the
  /// results when it committed, busy when it did not, outcome_unknown when
  /// that cannot be found out now, with `retry_advice` (how the caller may
  /// send the group again).
  template <class Result, class Write>
  std::vector<Result> write_group(const char* context, std::size_t count,
                                  Write write, const char* retry_advice);
  bool old_session_gone(const backend_identity& lost);
  bool committed(const std::string& event_id);

  session& link_;
  event_id_source event_ids_;
  trace_source traces_;
  std::function<void()> before_commit_;
  lost_commits lost_;
};

} // namespace outbox::storage::postgres
