#pragma once

#include "broker/inbox_trim.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace outbox::broker {

class connection;

/// Dedup records whose events were delivered (the caller judged that from
/// the outbox), gathered until there are enough to be worth one read of the
/// lists, then trimmed in script calls of `batch` records unless a copy of
/// their event still waits in a queue or processing list. Only these ids
/// are held, never every record a scan looks at.
class trim_candidates {
public:
  /// What the candidates came to so far; after a throw, what was done
  /// before it (each script call commits on its own).
  struct counts {
    /// Ids given again (HSCAN may return a field twice): counted once.
    std::int64_t repeated = 0;
    /// Kept: a copy of the event still waits in a queue or processing list.
    std::int64_t queued = 0;
    std::int64_t trimmed = 0;
    /// Kept by the script for another reason (see inbox_trim), the records
    /// already gone not included.
    std::int64_t kept_other = 0;
    /// Already gone when their call came: trimmed by an earlier call, the
    /// scan having named them twice (HSCAN may, while Redis resizes the
    /// hash).
    std::int64_t gone = 0;
    /// Script calls made.
    std::int64_t batches = 0;
  };

  /// Trims records applied before `cutoff_ms` (Redis TIME, ms).
  trim_candidates(connection& redis, const keys& names, std::int64_t cutoff_ms,
                  std::size_t batch);

  /// Adds ids; trims what is gathered once there are enough.
  void add(std::vector<std::string> ids);

  /// Trims what is gathered. The lists are read after the caller judged
  /// these events delivered: a copy a relay pushed before its ack was read
  /// is in the lists by then. With nothing gathered, they are not read at
  /// all. Throws broker_error.
  void flush();

  const counts& done() const { return counts_; }

private:
  connection& redis_;
  const keys& names_;
  std::int64_t cutoff_;
  std::size_t batch_;
  std::size_t limit_;
  inbox_trim trimmer_;
  counts counts_;
  std::unordered_set<std::string> ids_;
};

} // namespace outbox::broker
