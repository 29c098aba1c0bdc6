#include "cli/batch_flag.hpp"

#include <iostream>

namespace outbox::cli {

bool batch_in_range(const std::string& command, int batch) {
  if (batch >= 1 && batch <= max_batch)
    return true;
  std::cerr << "outbox " << command << ": --batch must be between 1 and "
            << max_batch << ", got " << batch << '\n';
  return false;
}

} // namespace outbox::cli
