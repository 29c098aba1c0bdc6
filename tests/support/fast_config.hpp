#pragma once

// The config of tests that run `outbox` processes to completion: short
// leases and timeouts, fast polling, so a bounded run ends soon after the
// queues are drained and a takeover comes within a second.

#include <nlohmann/json.hpp>

namespace outbox::test {

/// That config, with `patch` merged in (RFC 7386: a test's own values
/// replace the defaults key by key). The lease (also the consumers' lock)
/// must outlast both stores' timeouts together (lease.ttl_ms >
/// busy_timeout_ms + io_timeout_ms): a patch that shortens it shortens
/// those too.
inline nlohmann::json fast_config(const nlohmann::json& patch = {}) {
  nlohmann::json config = {
      {"db", {{"busy_timeout_ms", 150}}},
      {"redis", {{"io_timeout_ms", 200}}},
      {"lease", {{"ttl_ms", 400}, {"batch", 64}}},
      {"run",
       {{"poll_interval_ms", 10},
        {"idle_poll_max_ms", 100},
        {"consumer_block_ms", 50}}},
  };
  if (!patch.is_null())
    config.merge_patch(patch);
  return config;
}

} // namespace outbox::test
