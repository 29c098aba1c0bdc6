#pragma once

#include <string>

namespace outbox::broker {

/// The inbox's Lua source: dedup by event_id and the effect in one atomic
/// step. KEYS: processed, reserved, aggregate_seq, counters, dead_letter.
/// ARGV[1]: the entry text. Returns {'ok', violation (0|1)}, {'dup'} or
/// {'dead', reason}.
const std::string& inbox_script_source();

} // namespace outbox::broker
