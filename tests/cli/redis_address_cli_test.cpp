// Addresses a user may give that this build cannot or must not use: TLS,
// and a port where something other than Redis answers.

#include "support/loopback_listener.hpp"
#include "tests/cli/cli_fixture.hpp"

#include <gmock/gmock.h>
#include <unistd.h>

#include <string>

namespace outbox::test {
namespace {

/// A loopback web server of the worst kind: it reads whatever a client
/// sends and answers "HTTP/1.1 400 Bad Request", then hangs up. (It reads
/// the request first, as a web server does: closing with it unread would
/// reset the connection before the answer is read.)
class http_server : public loopback_server {
public:
  http_server() : loopback_server(answer) {}

private:
  static bool answer(int client, const std::string&) {
    static const std::string bad_request = "HTTP/1.1 400 Bad Request\r\n"
                                           "Content-Length: 0\r\n"
                                           "Connection: close\r\n\r\n";
    (void)!::write(client, bad_request.data(), bad_request.size());
    return false;
  }
};

using CliRedisAddress = cli_fixture;

TEST_F(CliRedisAddress, TlsIsRefusedNamingWhatToUseInstead) {
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  for (const std::string address :
       {"rediss://app:s3cret@redis.example:6380/2", "rediss://127.0.0.1:1"}) {
    auto r = outbox({"status"}, {"--redis", address});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(
        r.err, testing::HasSubstr("--redis: rediss:// (TLS) is not supported"));
    EXPECT_THAT(r.err, testing::HasSubstr("stunnel or spiped"));
    EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("s3cret")));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(CliRedisAddress, AServiceThatIsNotRedisIsNamedSo) {
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  http_server web;
  auto address = "127.0.0.1:" + std::to_string(web.port());
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"verify"},
        std::vector<std::string>{"run", "--until-drained", "--orders", "1"}}) {
    auto r = outbox(command, {"--redis", address});
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.out << r.err;
    EXPECT_NE(
        (r.out + r.err).find(address + " does not speak the Redis protocol"),
        std::string::npos)
        << command[0] << ": " << r.err;
  }
}

} // namespace
} // namespace outbox::test
