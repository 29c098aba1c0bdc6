#include "broker/sha1.hpp"

#include <array>
#include <cstdint>

namespace outbox::broker {

namespace {

std::uint32_t rotate_left(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

/// FIPS 180-4, section 6.1.2: one 64-byte block into the state.
void compress(std::array<std::uint32_t, 5>& h, const unsigned char* block) {
  std::array<std::uint32_t, 80> w{};
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t{block[4 * i]} << 24 |
           std::uint32_t{block[4 * i + 1]} << 16 |
           std::uint32_t{block[4 * i + 2]} << 8 |
           std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 80; ++i)
    w[i] = rotate_left(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  auto [a, b, c, d, e] = h;
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f = 0, k = 0;
    if (i < 20)
      f = (b & c) | (~b & d), k = 0x5A827999;
    else if (i < 40)
      f = b ^ c ^ d, k = 0x6ED9EBA1;
    else if (i < 60)
      f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
    else
      f = b ^ c ^ d, k = 0xCA62C1D6;
    auto t = rotate_left(a, 5) + f + e + k + w[i];
    e = d, d = c, c = rotate_left(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

} // namespace

std::string sha1_hex(const std::string& data) {
  std::array<std::uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476,
                                 0xC3D2E1F0};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t whole = data.size() / 64 * 64;
  for (std::size_t at = 0; at < whole; at += 64)
    compress(h, bytes + at);
  // The tail, a 1 bit, zeros, and the length in bits (big-endian), in one
  // or two blocks.
  std::array<unsigned char, 128> last{};
  std::size_t tail = data.size() - whole;
  for (std::size_t i = 0; i < tail; ++i)
    last[i] = bytes[whole + i];
  last[tail] = 0x80;
  std::size_t blocks = tail < 56 ? 1 : 2;
  std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i)
    last[blocks * 64 - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (std::size_t b = 0; b < blocks; ++b)
    compress(h, last.data() + 64 * b);
  static const char* digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(40);
  for (auto word : h)
    for (int shift = 28; shift >= 0; shift -= 4)
      hex += digits[(word >> shift) & 0xF];
  return hex;
}

} // namespace outbox::broker
