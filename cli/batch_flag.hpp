#pragma once

#include <string>

namespace outbox::cli {

/// Largest --batch of the retention commands. A trim batch is one Lua
/// script call and Redis runs nothing else while a script runs; a purge
/// batch is one write transaction that relays and writers wait behind. At
/// 10000 (lease.batch's cap too) each stays in the milliseconds; INT_MAX
/// made it one call or transaction over the whole set.
inline constexpr int max_batch = 10000;

/// True when `batch` is in 1..max_batch; else tells on stderr what was
/// expected and what was given (the caller exits 2).
bool batch_in_range(const std::string& command, int batch);

} // namespace outbox::cli
