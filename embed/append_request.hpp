#pragma once

// The checks every backend's outbox::append makes before it writes: the
// rules `outbox append` and the writer apply (storage/order_rules.cpp).

#include "embed/outbox/append.hpp"
#include "storage/order_store.hpp"

namespace outbox::embed {

/// `e` as the stores take it. Throws refused_event naming the problem.
storage::event_request valid_request(const event& e);

} // namespace outbox::embed
