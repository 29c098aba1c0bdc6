#pragma once

// What the trim stage requires of the trim it times: a trim that is fast
// because it forgot nothing, or too much, fails the stage.

#include "broker/trim_candidates.hpp"

#include <cstdint>
#include <string>

namespace outbox::bench {

/// What is wrong with a trim of a fixture of `records` dedup records, all
/// of delivered events and old enough, that left `left` in `processed`:
/// "" when it scanned and trimmed each of them once and kept none.
std::string trim_shortfall(const broker::trim_totals& totals,
                           std::int64_t records, std::int64_t left);

} // namespace outbox::bench
