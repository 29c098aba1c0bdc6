// libFuzzer target: scripts/fuzz builds and runs it (see fuzz/checks.hpp).
#include "fuzz/checks.hpp"
#include "fuzz/fuzz_target.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  return outbox::fuzz::fuzz_one("config_fuzzer", outbox::fuzz::check_config,
                                data, size);
}
