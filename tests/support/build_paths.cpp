#include "support/build_paths.hpp"

namespace outbox::test {

const std::string& source_dir() {
  static const std::string dir = OUTBOX_SOURCE_DIR;
  return dir;
}

const std::string& outbox_binary() {
  static const std::string binary = OUTBOX_BINARY;
  return binary;
}

} // namespace outbox::test
