#include "cli/service_notify.hpp"
#include "support/notify_socket.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

// The sd_notify(3) protocol spoken to a real unix datagram socket, and the
// watchdog settings systemd passes in the environment.

namespace outbox::test {
namespace {

using namespace std::chrono_literals;

/// Sets an environment variable for one test, restoring it after.
class scoped_env {
public:
  scoped_env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CliServiceNotify, SendsEachStateAsOneDatagram) {
  temp_dir dir{"outbox-notify"};
  notify_socket manager{dir.file("notify.sock")};
  scoped_env socket{"NOTIFY_SOCKET", manager.path()};
  EXPECT_TRUE(cli::notify_service_manager("READY=1\nSTATUS=relay running"));
  EXPECT_TRUE(cli::notify_service_manager("WATCHDOG=1"));
  EXPECT_EQ(manager.next(5s), "READY=1\nSTATUS=relay running");
  EXPECT_EQ(manager.next(5s), "WATCHDOG=1");
}

TEST(CliServiceNotify, OutsideSystemdNothingIsSentAndNothingFails) {
  scoped_env socket{"NOTIFY_SOCKET", ""};
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(cli::notify_service_manager("READY=1"));
  temp_dir dir{"outbox-notify"};
  // A socket that is gone (the manager restarted): still not fatal.
  scoped_env gone{"NOTIFY_SOCKET", dir.file("nobody.sock")};
  EXPECT_FALSE(cli::notify_service_manager("READY=1"));
}

TEST(CliServiceNotify, TheWatchdogIntervalIsOursOnlyForOurPid) {
  scoped_env usec{"WATCHDOG_USEC", "30000000"};
  scoped_env pid{"WATCHDOG_PID", std::to_string(::getpid())};
  EXPECT_EQ(cli::watchdog_interval(), std::chrono::milliseconds(30000));
  scoped_env other{"WATCHDOG_PID", std::to_string(::getpid() + 1)};
  EXPECT_FALSE(cli::watchdog_interval());
  scoped_env mine{"WATCHDOG_PID", std::to_string(::getpid())};
  scoped_env garbage{"WATCHDOG_USEC", "30s"};
  EXPECT_FALSE(cli::watchdog_interval());
}

} // namespace
} // namespace outbox::test
