#pragma once

// Where the writer's answer to one request goes: the request's own
// response promise (place_atom, append_atom), or its slot in a batch
// (place_batch_atom, append_batch_atom), answered once every slot is in.

#include "actors/messages.hpp"

#include <caf/make_message.hpp>
#include <caf/response_promise.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace outbox::actors {

/// A batch's outcomes, gathered as its requests are committed or refused,
/// and delivered to its requester once all are in: a batch may be split
/// across groups (commit_batch), and its refused tickets answer at once.
template <class Receipt>
class batch_reply {
public:
  batch_reply(caf::response_promise promise, std::size_t size)
      : promise_(std::move(promise)), outcomes_(size), open_(size) {}

  void fill(std::size_t slot, batch_outcome<Receipt> outcome) {
    outcomes_[slot] = std::move(outcome);
    if (--open_ == 0)
      promise_.deliver(std::move(outcomes_));
  }

private:
  caf::response_promise promise_;
  std::vector<batch_outcome<Receipt>> outcomes_;
  std::size_t open_;
};

/// The answer to one request: a receipt, or an error for it alone.
template <class Receipt>
class reply_to {
public:
  explicit reply_to(caf::response_promise promise)
      : promise_(std::move(promise)) {}
  reply_to(std::shared_ptr<batch_reply<Receipt>> batch, std::size_t slot)
      : batch_(std::move(batch)), slot_(slot) {}

  void deliver(Receipt receipt) {
    if (batch_)
      batch_->fill(slot_, {std::move(receipt), ec::none, {}});
    else
      promise_.deliver(std::move(receipt));
  }

  void refuse(ec code, std::string detail) {
    if (batch_)
      batch_->fill(slot_, {{}, code, std::move(detail)});
    else
      promise_.deliver(caf::make_error(code, std::move(detail)));
  }

  /// The writer_core's outcome for this request: its receipt or its error.
  void answer(batch_outcome<Receipt> outcome) {
    if (outcome.ok())
      deliver(std::move(outcome.receipt));
    else
      refuse(outcome.error, std::move(outcome.detail));
  }

private:
  caf::response_promise promise_;
  std::shared_ptr<batch_reply<Receipt>> batch_;
  std::size_t slot_ = 0;
};

} // namespace outbox::actors
