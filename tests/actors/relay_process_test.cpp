#include "actors/relay_process.hpp"

#include "actors/coordinator.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

// What `outbox status` says of a lease owner's process, for names made the
// way `outbox run` makes them: worker_name() with a "<host>-<pid>" prefix.

using namespace outbox;
using outbox::test::gone_pid;

namespace {

std::string this_host() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string relay_of(const std::string& host, pid_t pid) {
  return actors::worker_name(host + "-" + std::to_string(pid),
                             actors::worker_slot::role::relay, 0, 2);
}

TEST(ActorRelayProcess, ARelayOfAProcessHereThatExitedIsGone) {
  EXPECT_EQ(actors::relay_process_state(relay_of(this_host(), gone_pid())),
            "gone");
}

TEST(ActorRelayProcess, ANameWithTheProcessStartIsReadToo) {
  // `outbox run` names its process <host>-<pid>.<start> (cli/common_options).
  auto named = [](pid_t pid) {
    return actors::worker_name(this_host() + "-" + std::to_string(pid) +
                                   ".mlz3k9a2b9f3c",
                               actors::worker_slot::role::relay, 1, 0);
  };
  EXPECT_EQ(actors::relay_process_state(named(gone_pid())), "gone");
  EXPECT_EQ(actors::relay_process_state(named(::getpid())), "");
}

TEST(ActorRelayProcess, CannotTellForARunningProcessAnotherHostOrAnotherName) {
  auto gone = gone_pid();
  for (const auto& owner :
       {relay_of(this_host(), ::getpid()), relay_of(this_host() + "x", gone),
        actors::worker_name(this_host() + "-" + std::to_string(gone),
                            actors::worker_slot::role::consumer, 0, 0),
        std::string{"relay-1"}, std::string{}}) {
    SCOPED_TRACE(owner);
    EXPECT_EQ(actors::relay_process_state(owner), "");
  }
}

} // namespace
