#pragma once

// Where the tests find the project's files and the binary they run, read
// at run time, so that no test object holds the checkout's path and every
// one compiles the same in any checkout (a compiler cache shares them
// between clones). OUTBOX_TEST_SOURCE_DIR and OUTBOX_TEST_BINARY override
// what the build folder says, for a test binary run from elsewhere.

#include <string>

namespace outbox::test {

/// The source tree (docs/, config/, fuzz/, scripts/): the one the test
/// binary's build folder was configured from (its CMakeCache.txt).
const std::string& source_dir();

/// The `outbox` binary the end-to-end tests run: beside the test binary.
const std::string& outbox_binary();

/// The build folder: the test binary's own, which holds the `outbox`
/// binary, what the build made beside it (the man page, the layer map in
/// layering/layers.md) and CMakeCache.txt.
const std::string& build_dir();

} // namespace outbox::test
