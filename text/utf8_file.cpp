#include "text/utf8_file.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace outbox::text {

bool is_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

std::string read_utf8_file(const std::string& path, std::size_t max_bytes,
                           const std::string& kind) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw utf8_file_error("cannot read " + path + ": " + std::strerror(errno));
  std::string text{std::istreambuf_iterator<char>{in},
                   std::istreambuf_iterator<char>{}};
  if (in.bad())
    throw utf8_file_error("cannot read " + path + ": " + std::strerror(errno));
  if (text.size() > max_bytes)
    throw utf8_file_error(path + " is " + std::to_string(text.size()) +
                          " bytes, over the " + std::to_string(max_bytes) +
                          " " + kind + " may have");
  if (!is_utf8(text))
    throw utf8_file_error(path + " is not UTF-8 text");
  return text;
}

} // namespace outbox::text
