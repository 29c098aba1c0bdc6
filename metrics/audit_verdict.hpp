#pragma once

// The conservation audit's verdict as plain data: what audit/ computes
// (audit/conservation.hpp: evaluate) and what `outbox verify` prints, the
// pipeline_port hands the coordinator and the run report carries. Free of
// storage and Redis, so every layer that reports on a run may hold one.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::metrics {

/// One conservation check (seed 001: conservation beats success logs).
struct audit_check {
  std::string name;
  enum class state { passed, failed, skipped } result = state::passed;
  /// What was compared, or what broke, with counts and a few example ids.
  std::string detail;
};

/// "passed", "failed" or "skipped".
const char* result_name(audit_check::state result);

/// One event type's figures in the audit (`outbox verify` per event type).
struct type_figures {
  /// Its outbox rows PUBLISHED (those read for the audit).
  std::int64_t published = 0;
  /// Of those, how many the consumers recorded as processed.
  std::int64_t processed = 0;
};

/// The outcome of all checks plus the figures they were computed from.
struct audit_verdict {
  std::vector<audit_check> checks;
  std::int64_t outbox_rows = 0;
  std::int64_t published = 0;
  std::int64_t unpublished = 0; // PENDING + SENDING
  std::int64_t failed_rows = 0;
  std::int64_t processed = 0;
  std::int64_t queued = 0;
  std::int64_t in_processing = 0;
  std::int64_t dead_lettered = 0;
  std::int64_t order_violations = 0;
  /// Per event type: published, and processed of those (a published
  /// event whose record `outbox trim` deleted counts as published only).
  std::map<std::string, type_figures> by_type;

  /// True when no check failed (skipped checks do not fail).
  bool ok() const;
  /// {"ok":..., "checks":[{"name","result","detail"}], figures...}
  std::string to_json() const;
  /// One line per check, for people.
  std::string to_text() const;
};

/// The verdict as the JSON object to_json() writes, for documents that
/// hold one (the run report's "audit").
nlohmann::json audit_verdict_json(const audit_verdict& verdict);

/// A verdict read back from that object; what it lacks stays at its
/// default (a check without a name is "?", an unknown result skipped).
audit_verdict audit_verdict_from_json(const nlohmann::json& object);

} // namespace outbox::metrics
