#pragma once

// The properties the fuzzers check, shared with the regression test
// (tests/fuzz/fuzz_regression_test.cpp) so an input that once broke them is
// replayed by the normal suite. Both return a description of the first
// broken property, or nothing; a crash or a sanitizer report is a failure too.

#include <optional>
#include <string>

namespace outbox::fuzz {

/// broker::decode must classify any bytes without throwing; an accepted entry
/// must survive encode and decode unchanged, and encode must be stable.
std::optional<std::string> check_entry(const std::string& bytes);

/// config::apply_json then config::validate may only throw config_error; an
/// accepted document must re-load from its to_json form to the same settings.
std::optional<std::string> check_config(const std::string& bytes);

} // namespace outbox::fuzz
