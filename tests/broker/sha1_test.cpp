#include "broker/sha1.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <hiredis/hiredis.h>

#include <string>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerSha1 = redis_fixture;

TEST(BrokerSha1Vectors, MatchesTheStandardsExamples) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(
      sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1'000'000, 'a')),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// The remove script compares this digest with redis.sha1hex: they must agree
// on every length around the block boundaries, and on any byte.
TEST_F(BrokerSha1, AgreesWithRedisSha1hex) {
  for (std::size_t length = 0; length <= 200; ++length) {
    std::string data;
    for (std::size_t i = 0; i < length; ++i)
      data += static_cast<char>((i * 131 + length) % 256);
    auto r =
        conn().command({"EVAL", "return redis.sha1hex(ARGV[1])", "0", data});
    ASSERT_EQ(r->type, REDIS_REPLY_STRING);
    EXPECT_EQ(sha1_hex(data), reply_text(*r)) << "length " << length;
  }
}

} // namespace
