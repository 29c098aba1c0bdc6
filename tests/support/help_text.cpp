#include "support/help_text.hpp"

#include <regex>
#include <sstream>

namespace outbox::test {

std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> names;
  auto at = help.find("Subcommands:\n");
  if (at == std::string::npos)
    return names;
  std::istringstream lines{help.substr(at)};
  static const std::regex entry{R"(^  ([a-z][a-z-]*)(\s.*)?$)"};
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, entry))
      names.push_back(m[1].str());
  }
  return names;
}

} // namespace outbox::test
