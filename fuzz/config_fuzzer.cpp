// libFuzzer target: scripts/fuzz builds and runs it (see fuzz/checks.hpp).
#include "fuzz/checks.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (auto problem = outbox::fuzz::check_config(bytes)) {
    std::fprintf(stderr, "config_fuzzer: %s\n", problem->c_str());
    std::abort();
  }
  return 0;
}
