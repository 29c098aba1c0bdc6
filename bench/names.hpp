#pragma once

// The names of one of the benchmark's tables (its stages, its targets), as
// the help texts list them and --stage and --target are checked against.

#include <string>
#include <vector>

namespace outbox::bench {

/// What `name_of` reads from each of `entries`, in their order.
template <class Entries, class NameOf>
std::vector<std::string> names_of(const Entries& entries, NameOf name_of) {
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (const auto& entry : entries)
    names.emplace_back(name_of(entry));
  return names;
}

} // namespace outbox::bench
