#pragma once

// Finding keys without blocking Redis (SCAN, not KEYS).

#include "broker/broker_fwd.hpp"

#include <string>
#include <vector>

namespace outbox::broker {

/// Every key whose name starts with `prefix` (taken literally: glob
/// characters in it are escaped), of Redis type `type` ("list", "hash"...)
/// or of any type when `type` is empty. Sorted, each once (SCAN may return a
/// key more than once).
std::vector<std::string> scan_prefix(connection& conn,
                                     const std::string& prefix,
                                     const std::string& type = {});

/// True when `key` exists (EXISTS). Throws broker_error.
bool key_exists(connection& conn, const std::string& key);

} // namespace outbox::broker
