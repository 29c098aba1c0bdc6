#pragma once

// Reading a --help text the way a reader does, for the tests that hold the
// docs and the man page to what the binary lists.

#include <string>
#include <vector>

namespace outbox::test {

/// The names listed under "Subcommands:" in a --help text, in its order;
/// empty when it lists none.
std::vector<std::string> subcommands_in(const std::string& help);

} // namespace outbox::test
