#pragma once

#include "actors/ports.hpp"
#include "adapters/sink_apply.hpp"
#include "broker/connection.hpp"
#include "broker/fence.hpp"
#include "broker/inbox_options.hpp"
#include "broker/keys.hpp"

#include <memory>
#include <optional>

namespace outbox::adapters {

/// A relay's publisher on its own Redis connection.
std::unique_ptr<actors::publish_port>
make_redis_publish_port(const broker::connection_options& redis,
                        const broker::keys& names);

/// A consumer's queue and inbox on its own Redis connection; with an
/// active `fenced_by`, its pops and applies check the consumers' lock
/// (broker/fence.hpp); `options` say what becomes of event types it has
/// no effect for; with a `sink`, effects of its types run in the
/// consumer's own database (adapters/sink_apply.hpp).
std::unique_ptr<actors::consume_port>
make_redis_consume_port(const broker::connection_options& redis,
                        const broker::keys& names,
                        const broker::fence& fenced_by = {},
                        const broker::inbox_options& options = {},
                        std::optional<consumer_sink> sink = std::nullopt);

} // namespace outbox::adapters
