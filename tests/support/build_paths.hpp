#pragma once

// Where the tests find the project's files and the binary they run. Only
// build_paths.cpp sees the build's absolute paths, so every other test
// object compiles the same in any checkout (and ccache shares it).

#include <string>

namespace outbox::test {

/// The source tree (README.md, config/, fuzz/, scripts/).
const std::string& source_dir();

/// The `outbox` binary the end-to-end tests run.
const std::string& outbox_binary();

} // namespace outbox::test
