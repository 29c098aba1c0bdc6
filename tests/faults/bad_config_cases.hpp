#pragma once
// The cases of the bad-configuration scenario (bad_config_test.cpp): one
// row per file or flag that must be refused with exit 2.

#include <ostream>
#include <string>
#include <vector>

namespace outbox::test {

/// Where --config points.
enum class config_source {
  /// No --config at all (flags only).
  none,
  /// A file holding `text`.
  file,
  /// A path where nothing exists.
  missing,
  /// A folder: it opens, but cannot be read.
  folder,
  /// A device that never ends.
  endless,
};

struct bad_input {
  const char* name;
  /// The command and its flags (common flags are added).
  std::vector<std::string> command;
  config_source source = config_source::none;
  std::string text;
  /// What stderr must contain: the key or flag; "<config>" stands for the
  /// config file's path.
  std::vector<std::string> mentions;
};

inline std::ostream& operator<<(std::ostream& out, const bad_input& c) {
  return out << c.name;
}

/// Every case, in the order the suite lists them.
extern const std::vector<bad_input> bad_inputs;

} // namespace outbox::test
