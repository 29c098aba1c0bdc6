#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/inbox_trim.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace outbox::broker {

/// What a whole trim of `processed` did; every record looked at lands in
/// one count.
struct trim_totals {
  std::int64_t scanned = 0;
  std::int64_t trimmed = 0;
  /// Applied at or after the cutoff.
  std::int64_t kept_young = 0;
  /// Its event still waits in a queue or processing list.
  std::int64_t kept_queued = 0;
  /// Its row is not PUBLISHED (a FAILED row may be retried and delivered
  /// again) or was published after the cutoff.
  std::int64_t kept_unpublished = 0;
  /// Not a record the inbox script wrote, no row and no sign of a purge
  /// (another database?), or changed under the trim.
  std::int64_t kept_other = 0;
  /// Script calls made; each commits on its own.
  std::int64_t batches = 0;
};

/// Dedup records whose events were delivered (the caller judged that from
/// the outbox), gathered until there are enough to be worth one read of the
/// lists, then trimmed in script calls of `batch` records unless a copy of
/// their event still waits in a queue or processing list. Only these ids
/// are held, never every record a scan looks at. Counts in `totals` as it
/// goes: after a throw, they say what was done before it.
class trim_candidates {
public:
  /// Trims records applied before `cutoff_ms` (Redis TIME, ms).
  trim_candidates(connection& redis, const keys& names, std::int64_t cutoff_ms,
                  std::size_t batch, trim_totals& totals);

  /// Adds ids the scan counted; trims what is gathered once there are
  /// enough.
  void add(std::vector<std::string> ids);

  /// Trims what is gathered. The lists are read after the caller judged
  /// these events delivered: a copy a relay pushed before its ack was read
  /// is in the lists by then. With nothing gathered, they are not read at
  /// all. Throws broker_error.
  void flush();

private:
  connection& redis_;
  const keys& names_;
  std::int64_t cutoff_;
  std::size_t batch_;
  std::size_t limit_;
  inbox_trim trimmer_;
  trim_totals& totals_;
  std::unordered_set<std::string> ids_;
};

} // namespace outbox::broker
