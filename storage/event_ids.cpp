#include "storage/event_ids.hpp"

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>

namespace outbox::storage {

std::mt19937_64 seeded_rng() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(),
                     device(), device(), device(), device()};
  return std::mt19937_64{seed};
}

event_id_source::event_id_source() : rng_(seeded_rng()) {}

std::string event_id_source::next() {
  // Version 7: the first 48 bits are the Unix time in ms, so ids made later
  // sort later and each lands at the right edge of the event_id index, not
  // on a random page of it. 74 bits stay random.
  auto ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  std::uint64_t hi = (ms << 16) | (rng_() & 0x0fff) | std::uint64_t{0x7000};
  std::uint64_t lo = rng_();
  lo = (lo & ~(std::uint64_t{3} << 62)) | (std::uint64_t{2} << 62);
  std::array<char, 37> text{};
  std::snprintf(text.data(), text.size(), "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xffff),
                static_cast<unsigned long long>(hi & 0xffff),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return std::string{text.data()};
}

bool is_event_id(const std::string& text) {
  if (text.size() != 36)
    return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-'
             : !std::isxdigit(static_cast<unsigned char>(text[i])))
      return false;
  }
  return true;
}

} // namespace outbox::storage
