#include "broker/lua_files.hpp"

namespace outbox::broker {

std::string lua_source(std::initializer_list<const char*> files) {
  std::string source;
  for (const char* file : files) {
    // Each file starts on a line of its own, whatever the one before ends
    // with.
    source += '\n';
    source += file;
  }
  return source;
}

} // namespace outbox::broker
