#pragma once

#include <string>

namespace outbox::broker {

/// The inbox's Lua source: dedup by event_id and the effect in one atomic
/// step, for each entry of a batch in order. KEYS: processed, reserved,
/// aggregate_seq, counters, dead_letter. ARGV: the entries' text. Returns
/// one item per entry: {'ok', violation (0|1), committed_at}, {'dup',
/// committed_at} or {'dead', reason}; or an error reply if an effect failed
/// (that entry changed nothing; those before it stay applied).
const std::string& inbox_script_source();

} // namespace outbox::broker
