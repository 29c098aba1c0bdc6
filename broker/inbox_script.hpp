#pragma once

#include "broker/keys.hpp"

#include <string>
#include <vector>

namespace outbox::broker {

/// The inbox's Lua source: dedup by event_id and the effect in one atomic
/// step, for each entry of a batch in order. KEYS: inbox_script_keys().
/// ARGV: the fence's holder ('' for none) or a JSON object of it and the
/// options (inbox_script_options()), then the entries' text. Returns
/// one item per entry: {'ok', violation (0|1), committed_at}, {'dup',
/// committed_at} or {'dead', reason}; or an error reply if an effect failed
/// (that entry changed nothing; those before it stay applied). Its
/// interface for other languages: docs/inbox-script.md (`outbox
/// inbox-script` prints this text).
const std::string& inbox_script_source();

/// The script's KEYS in order, from the configured names: processed,
/// reserved, aggregate_seq, counters, dead_letter, the seq gaps, the
/// consumers' lock (the fence's lock when a fence is given).
std::vector<std::string> inbox_script_keys(const keys& names,
                                           const std::string& lock = "");

} // namespace outbox::broker
