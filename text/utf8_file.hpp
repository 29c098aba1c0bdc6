#pragma once

// Text that must be UTF-8 to be used at all: names that reach JSON entries,
// hash fields and terminals, and the effects files read whole at a start.

#include <cstddef>
#include <stdexcept>
#include <string>

namespace outbox::text {

/// True when `text` is well-formed UTF-8 (nlohmann's strict encoder, the
/// one every JSON entry goes through, is the judge).
bool is_utf8(const std::string& text);

/// Why a file read by read_utf8_file cannot be used; the message names it.
class utf8_file_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The file at `path`, whole. Throws utf8_file_error when it cannot be
/// read, holds more than `max_bytes` (a limit `kind`, "an effects file",
/// may have) or is not UTF-8.
std::string read_utf8_file(const std::string& path, std::size_t max_bytes,
                           const std::string& kind);

} // namespace outbox::text
