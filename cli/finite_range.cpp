#include "cli/finite_range.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace outbox::cli {

CLI::Validator finite_range(double min, double max) {
  char bounds[64];
  std::snprintf(bounds, sizeof bounds, "%g and %g", min, max);
  std::string range = bounds;
  return CLI::Validator{
      [min, max, range](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        bool parsed = !text.empty() && end == text.c_str() + text.size();
        if (parsed && errno != ERANGE && std::isfinite(value) && value >= min &&
            value <= max)
          return {};
        return "must be a finite number between " + range + ", got '" + text +
               "'";
      },
      "FINITE in [" + range + "]"};
}

} // namespace outbox::cli
