#include "cli/output_mode.hpp"

#include <unistd.h>

namespace outbox::cli {

bool prints_json(bool json_flag) {
  return json_flag || ::isatty(STDOUT_FILENO) == 0;
}

} // namespace outbox::cli
