#pragma once

// The config of the fault tests that run `outbox run` to completion against
// hand-made Redis content: short timeouts and leases, fast polling, so a
// bounded run ends soon after the queues are drained.

#include <string>

namespace outbox::test {

/// That config as JSON text; `extra` adds top-level sections (e.g.
/// R"("broker": {"max_entry_bytes": 4096},)"), each followed by a comma.
inline std::string quick_run_config(const std::string& extra = "") {
  return R"({
  "db": {"busy_timeout_ms": 150},
  "redis": {"io_timeout_ms": 200},
  "lease": {"ttl_ms": 400, "batch": 64},
  )" + extra +
         R"(
  "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 100,
          "consumer_block_ms": 50}
})";
}

} // namespace outbox::test
