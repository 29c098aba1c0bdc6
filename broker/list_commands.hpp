#pragma once

// Plain commands on lists and keys, for callers that look at or stage Redis
// state outside the pipeline's scripts: the lab reads its queue whole,
// counts and fills the dual-write demo's list, and deletes its keys on reset.

#include "broker/broker_fwd.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::broker {

/// Every entry of `list`, head first (LRANGE 0 -1); empty when there is no
/// such list. Throws broker_error.
std::vector<std::string> whole_list(connection& conn, const std::string& list);

/// LLEN `list`. Throws broker_error.
std::int64_t list_size(connection& conn, const std::string& list);

/// The entries of all `lists` together: one LLEN each, in one round trip.
std::int64_t total_size(connection& conn,
                        const std::vector<std::string>& lists);

/// RPUSH one entry to `list`. Throws broker_error.
void push_to_list(connection& conn, const std::string& list,
                  const std::string& entry);

/// DEL every key of `keys` (at least one); returns how many existed.
/// Throws broker_error.
std::int64_t delete_keys(connection& conn,
                         const std::vector<std::string>& keys);

} // namespace outbox::broker
