#pragma once

// Finding keys by prefix without blocking Redis (SCAN, not KEYS).

#include <string>
#include <vector>

namespace outbox::broker {

class connection;

/// Every key whose name starts with `prefix` (taken literally: glob
/// characters in it are escaped), of Redis type `type` ("list", "hash"...)
/// or of any type when `type` is empty. Sorted, each once (SCAN may return a
/// key more than once).
std::vector<std::string> scan_prefix(connection& conn,
                                     const std::string& prefix,
                                     const std::string& type = {});

} // namespace outbox::broker
