#include "broker/sha1.hpp"

#include <array>
#include <cstdint>

namespace outbox::broker {

namespace {

std::uint32_t rotate_left(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

/// Steps `i` to `i + 4` of one kind (round function `f` of x, y, z and
/// constant `k`), with the five words' roles rotated by naming instead of
/// moved: the same steps as FIPS 180-4's loop, where every step shifts
/// a..e down by one. Moving them, with a choice of function per step, cost
/// a fifth more (a 260-byte entry: 1.7 -> 1.4 us); a consumer digests every
/// entry it removes.
#define OUTBOX_SHA1_STEP(a, b, c, d, e, f, k, i)                               \
  e += rotate_left(a, 5) + f(b, c, d) + (k) + w[i];                            \
  b = rotate_left(b, 30);
#define OUTBOX_SHA1_FIVE_STEPS(f, k, i)                                        \
  OUTBOX_SHA1_STEP(a, b, c, d, e, f, k, i)                                     \
  OUTBOX_SHA1_STEP(e, a, b, c, d, f, k, i + 1)                                 \
  OUTBOX_SHA1_STEP(d, e, a, b, c, f, k, i + 2)                                 \
  OUTBOX_SHA1_STEP(c, d, e, a, b, f, k, i + 3)                                 \
  OUTBOX_SHA1_STEP(b, c, d, e, a, f, k, i + 4)

std::uint32_t choose(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return (x & y) | (~x & z);
}
std::uint32_t parity(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return x ^ y ^ z;
}
std::uint32_t majority(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return (x & y) | (x & z) | (y & z);
}

/// FIPS 180-4, section 6.1.2: one 64-byte block into the state.
void compress(std::array<std::uint32_t, 5>& h, const unsigned char* block) {
  std::array<std::uint32_t, 80> w;
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t{block[4 * i]} << 24 |
           std::uint32_t{block[4 * i + 1]} << 16 |
           std::uint32_t{block[4 * i + 2]} << 8 |
           std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 80; ++i)
    w[i] = rotate_left(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 20; i += 5) {
    OUTBOX_SHA1_FIVE_STEPS(choose, 0x5A827999u, i)
  }
  for (int i = 20; i < 40; i += 5) {
    OUTBOX_SHA1_FIVE_STEPS(parity, 0x6ED9EBA1u, i)
  }
  for (int i = 40; i < 60; i += 5) {
    OUTBOX_SHA1_FIVE_STEPS(majority, 0x8F1BBCDCu, i)
  }
  for (int i = 60; i < 80; i += 5) {
    OUTBOX_SHA1_FIVE_STEPS(parity, 0xCA62C1D6u, i)
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

#undef OUTBOX_SHA1_FIVE_STEPS
#undef OUTBOX_SHA1_STEP

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
