#pragma once

// The writer on the pipeline fixture: started and waiting, five orders to
// send it, and its 5 ms group delay waited out.

#include "actors/messages.hpp"
#include "actors/writer.hpp"
#include "storage/order_store.hpp"
#include "storage/types.hpp"
#include "tests/actors/pipeline_fixture.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

using order_reply = std::shared_ptr<reply<actors::order_receipt>>;

struct order_ask {
  std::string sku;
  std::int64_t qty;
};

/// An order row as order_row() returns it.
inline std::pair<std::string, std::int64_t> row(const std::string& sku,
                                                std::int64_t qty) {
  return {sku, qty};
}

inline const std::vector<order_ask> five_orders{
    {"apple", 1}, {"pear", 2}, {"plum", 3}, {"fig", 4}, {"kiwi", 5}};

class writer_fixture : public pipeline_fixture {
protected:
  /// A writer that has started and waits for requests.
  caf::actor started_writer(int commit_batch = 100, int commit_delay_ms = 5) {
    auto writer = spawn_writer(writer_config(commit_batch, commit_delay_ms));
    run();
    return writer;
  }

  /// Sends the first `count` of five_orders to `writer`, without a key.
  std::vector<order_reply> place_first(const caf::actor& writer,
                                       std::size_t count) {
    std::vector<order_reply> replies;
    for (std::size_t i = 0; i < count; ++i)
      replies.push_back(
          place_via(writer, "", five_orders[i].sku, five_orders[i].qty));
    return replies;
  }

  /// Lets the writer take the requests sent and waits out its 5 ms group
  /// delay, so that the group commits.
  void commit_group() {
    run();
    advance(5, 1);
  }
};

} // namespace outbox::test
