#include "cli/version.hpp"

// Defined for this file only (CMakeLists.txt), so a version bump recompiles
// one file, not the library.
#ifndef OUTBOX_VERSION
#error "OUTBOX_VERSION is set by CMakeLists.txt"
#endif

namespace outbox::cli {

const char* outbox_version() {
  return OUTBOX_VERSION;
}

} // namespace outbox::cli
