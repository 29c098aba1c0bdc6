#include "storage/postgres/order_store.hpp"

#include "storage/postgres/arrays.hpp"
#include "storage/postgres/session.hpp"
#include "storage/store_error.hpp"
#include "text/event_headers.hpp"

#include <algorithm>
#include <numeric>

namespace outbox::storage::postgres {

namespace {

/// How often a keyed order asks again when the key's holder rolled back
/// between our insert and our lookup (each round waits for a holder).
constexpr int key_rounds = 5;

/// The positions of `items`, ordered by `key` (stable): a group takes its
/// row locks in one order, so two groups cannot deadlock.
template <class Item, class Key>
std::vector<std::size_t> locking_order(const std::vector<Item>& items,
                                       Key key) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) {
                     return key(items[a]) < key(items[b]);
                   });
  return order;
}

/// The id of an event this group wrote itself (a replay wrote nothing), or
/// "" when it wrote none.
std::string written_event(const std::vector<placed_order>& results) {
  for (const auto& r : results)
    if (r.result == placed_order::outcome::placed)
      return r.event_id;
  return "";
}

std::string written_event(const std::vector<appended_event>& results) {
  for (const auto& r : results)
    if (!r.replayed)
      return r.event_id;
  return "";
}

} // namespace

placed_order order_store::place(const order_request& request, millis now) {
  placed_order result;
  std::string event_id = event_ids_.next();
  param order_id; // NULL: the statement takes the next one
  if (request.request_id) {
    auto print = request_fingerprint(request);
    // The key first: its insert waits for a concurrent holder of the same
    // key, and no unique violation ever reaches us (protocol/1_orders.sql).
    for (int round = 0;; ++round) {
      auto mine =
          link_.run("place_order", "place_order_key",
                    {*request.request_id, print, link_.time(now), event_id});
      if (mine.rows() == 1) {
        order_id = mine.text(0, 0);
        event_id = mine.text(0, 1);
        break;
      }
      auto seen =
          link_.run("place_order", "find_request_key", {*request.request_id});
      if (seen.rows() == 1) {
        result.result = seen.text(0, 0) == print
                            ? placed_order::outcome::replayed
                            : placed_order::outcome::conflict;
        result.order_id = seen.int64(0, 1);
        result.event_id = seen.text(0, 2);
        result.aggregate_id = order_aggregate_id(result.order_id);
        return result;
      }
      if (round + 1 == key_rounds)
        throw store_error(store_errc::busy,
                          "place_order: request key " + *request.request_id +
                              " kept changing hands; try again");
    }
  }
  auto headers = traces_.with_traceparent(request.headers);
  auto placed = link_.run("place_order", "place_order_rows",
                          {order_id, request.sku, std::to_string(request.qty),
                           event_id, link_.time(now), headers});
  result.order_id = placed.int64(0, 0);
  result.aggregate_id = placed.text(0, 1);
  result.event_id = placed.text(0, 2);
  result.trace_id = text::trace_id_of(headers).value_or("");
  return result;
}

void order_store::place_group(const std::vector<order_request>& requests,
                              const std::vector<std::size_t>& order, millis now,
                              std::vector<placed_order>& out) {
  std::vector<std::optional<std::string>> keys;
  std::vector<std::optional<std::string>> prints;
  std::vector<std::string> skus;
  std::vector<std::int64_t> qtys;
  std::vector<std::string> event_ids;
  std::vector<std::string> headers;
  for (const auto& r : requests) {
    keys.push_back(r.request_id);
    prints.push_back(r.request_id ? std::optional{request_fingerprint(r)}
                                  : std::nullopt);
    skus.push_back(r.sku);
    qtys.push_back(r.qty);
    event_ids.push_back(event_ids_.next());
    headers.push_back(traces_.with_traceparent(r.headers));
  }
  auto placed =
      link_.run("place_order", "place_orders",
                {text_array(keys), text_array(prints), text_array(skus),
                 integer_array(qtys), text_array(event_ids),
                 text_array(headers), link_.time(now)});
  std::vector<bool> written(requests.size(), false);
  for (int row = 0; row < placed.rows(); ++row) {
    auto i = static_cast<std::size_t>(placed.int64(row, 0) - 1);
    auto& result = out.at(i);
    result.order_id = placed.int64(row, 1);
    result.aggregate_id = placed.text(row, 2);
    result.event_id = placed.text(row, 3);
    result.trace_id = text::trace_id_of(headers[i]).value_or("");
    written[i] = true;
  }
  // A key taken before, or twice in this group: one at a time, in the
  // keys' order, as place_order_key and find_request_key decide (replayed
  // or conflict; a key purged meanwhile is taken anew).
  for (auto i : order)
    if (!written[i])
      out[i] = place(requests[i], now);
}

appended_event order_store::append(const event_request& r,
                                   const std::string& event_id,
                                   const std::string& headers, millis now) {
  auto made = link_.run("append_event", "append_event",
                        {r.aggregate_id, r.event_type, r.payload, event_id,
                         link_.time(now), headers});
  return {made.text(0, 0), r.aggregate_id, made.int64(0, 1),
          made.text(0, 2) == "t"};
}

void order_store::append_group(const std::vector<event_request>& requests,
                               const std::vector<std::size_t>& order,
                               millis now, std::vector<appended_event>& out) {
  // The arrays in locking order; row n of the answer is requests[order[n-1]].
  std::vector<std::string> aggregates, types, payloads, event_ids, headers;
  for (auto i : order) {
    const auto& r = requests[i];
    aggregates.push_back(r.aggregate_id);
    types.push_back(r.event_type);
    payloads.push_back(r.payload);
    // The caller's id, kept by its retries; else one made here, so that a
    // lost COMMIT can still be looked up.
    event_ids.push_back(r.event_id.empty() ? event_ids_.next() : r.event_id);
    headers.push_back(traces_.with_traceparent(r.headers));
  }
  auto made = link_.run("append_event", "append_events",
                        {text_array(aggregates), text_array(types),
                         text_array(payloads), text_array(event_ids),
                         text_array(headers), link_.time(now)});
  std::vector<bool> written(order.size(), false);
  for (int row = 0; row < made.rows(); ++row) {
    auto at = static_cast<std::size_t>(made.int64(row, 0) - 1);
    const auto& r = requests[order.at(at)];
    out[order[at]] = {made.text(row, 1), r.aggregate_id, made.int64(row, 2),
                      false};
    written[at] = true;
  }
  // An event_id there already, or twice in this group: append_event finds
  // the row (replayed) or names the clash, in the same locking order.
  for (std::size_t at = 0; at < order.size(); ++at)
    if (!written[at])
      out[order[at]] =
          append(requests[order[at]], event_ids[at], headers[at], now);
}

bool order_store::old_session_gone(const backend_identity& lost) {
  // Ends the session the COMMIT was lost with, waiting up to 5 s for it to
  // go (PostgreSQL 14's pg_terminate_backend with a timeout): a
  // transaction it still holds is then committed or rolled back for good.
  // Found by pid and start time: after a server restart the pid may serve
  // someone else, who must not be ended.
  link_.prepare(); // reconnects
  if (lost.pid == 0)
    return true;
  const char* same_backend =
      " FROM pg_stat_activity WHERE pid = $1::integer"
      " AND ($2::timestamptz IS NULL OR backend_start = $2::timestamptz)";
  std::vector<param> params{std::to_string(lost.pid),
                            lost.started.empty() ? param{} : lost.started};
  link_.query("commit check",
              std::string{"SELECT pg_terminate_backend(pid, 5000)"} +
                  same_backend,
              params);
  return link_
             .query("commit check",
                    std::string{"SELECT count(*)"} + same_backend, params)
             .int64(0, 0) == 0;
}

bool order_store::committed(const std::string& event_id) {
  return link_.run("commit check", "event_exists", {event_id}).rows() == 1;
}

template <class Result, class Write>
std::vector<Result> order_store::write_group(const char* context,
                                             std::size_t count, Write write,
                                             const char* retry_advice) {
  std::vector<Result> results(count);
  if (count == 0)
    return results;
  try {
    link_.transaction(
        context,
        [&] {
          write(results);
          if (before_commit_)
            before_commit_();
        },
        "BEGIN; SET LOCAL synchronous_commit = on");
  } catch (const commit_outcome_unknown& lost) {
    lost_.lost += static_cast<std::int64_t>(count);
    // Every event of the group committed or none did: ask for one of them
    // on a new connection, once the old session is gone (its COMMIT may
    // still be on its way).
    bool done = false;
    try {
      auto id = written_event(results);
      if (!id.empty() && !old_session_gone(lost.lost_backend()))
        throw store_error(store_errc::busy,
                          "its session is still running on the server");
      done = id.empty() || committed(id);
    } catch (const store_error& e) {
      // Said apart from busy: busy promises nothing was written.
      throw store_error(store_errc::outcome_unknown,
                        std::string{lost.what()} +
                            "; whether it committed is unknown (" + e.what() +
                            "): " + retry_advice);
    }
    (done ? lost_.committed : lost_.not_committed) +=
        static_cast<std::int64_t>(count);
    if (!done)
      throw store_error(store_errc::busy,
                        std::string{lost.what()} + "; it did not commit");
  }
  return results;
}

std::vector<placed_order>
order_store::place_orders(const std::vector<order_request>& requests,
                          millis now) {
  require_valid(requests);
  // Keys in one order. A repeated key in one group sees the earlier
  // request's key, like a later retry (replayed or conflict).
  auto order = locking_order(requests, [](const order_request& r) {
    return r.request_id.value_or("");
  });
  bool keyed =
      std::all_of(requests.begin(), requests.end(), [](const order_request& r) {
        return r.request_id.has_value();
      });
  return write_group<placed_order>(
      "place_order", requests.size(),
      [&](std::vector<placed_order>& out) {
        place_group(requests, order, now, out);
      },
      keyed ? "send the same requests again (their request keys make that "
              "safe), never new ones for them"
            : "an order without a request key cannot be sent again safely: "
              "look for it in the database first");
}

std::vector<appended_event>
order_store::append_events(const std::vector<event_request>& requests,
                           millis now) {
  require_valid(requests);
  // Aggregates in one order (their head rows are the locks); one
  // aggregate's events keep the order given, so their seqs do too.
  auto order = locking_order(
      requests, [](const event_request& r) { return r.aggregate_id; });
  return write_group<appended_event>(
      "append_event", requests.size(),
      [&](std::vector<appended_event>& out) {
        append_group(requests, order, now, out);
      },
      "send the same events again with their event ids (that makes it "
      "safe), never new ones for them");
}

} // namespace outbox::storage::postgres
