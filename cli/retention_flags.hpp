#pragma once

// The flags of the retention commands (purge, trim): how long ago is old
// enough, how much one batch deletes, --json.

#include "cli/common_options.hpp"
#include "storage/clock.hpp"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace outbox::cli {

/// Largest --batch of the retention commands. A trim batch is one Lua
/// script call and Redis runs nothing else while a script runs; a purge
/// batch is one write transaction that relays and writers wait behind. At
/// 10000 (lease.batch's cap too) each stays in the milliseconds; INT_MAX
/// made it one call or transaction over the whole set.
inline constexpr int max_batch = 10000;

struct retention_options {
  common_options common;
  /// The DURATION text, as given.
  std::string older_than;
  int batch = 1000;
  bool json = false;
  /// The command and its DURATION flag, for messages ("purge",
  /// "--published-older-than").
  std::string command;
  std::string older_than_flag;
};

/// Adds the required DURATION flag `older_than_flag` (help `age_help`),
/// --batch (help `batch_help`) and --json, in that order.
void add_retention_flags(CLI::App& command, retention_options& options,
                         const std::string& older_than_flag,
                         const std::string& age_help,
                         const std::string& batch_help);

/// Applies --log-level, then reads the age and checks the batch (1 to
/// max_batch): the age, or nothing after telling on stderr what is wrong
/// (the caller exits 2).
std::optional<storage::millis> retention_age(const retention_options& options);

} // namespace outbox::cli
