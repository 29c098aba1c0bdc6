#pragma once

// The body every libFuzzer target shares: run one property check on the
// input and abort (a crash libFuzzer keeps, with the input) when it fails.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace outbox::fuzz {

inline int fuzz_one(const char* target,
                    std::optional<std::string> (*check)(const std::string&),
                    const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (auto problem = check(bytes)) {
    std::fprintf(stderr, "%s: %s\n", target, problem->c_str());
    std::abort();
  }
  return 0;
}

} // namespace outbox::fuzz
