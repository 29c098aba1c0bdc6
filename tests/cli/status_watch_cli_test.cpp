#include "tests/cli/audit_fixture.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// `outbox status --watch` as a long-lived process: it stops at once on
// SIGTERM or when its reader goes away, and keeps one Redis connection.

namespace outbox::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

/// The binary with its stdout on a pipe the test reads, as `| head -1`
/// would, stderr dropped. Killed (SIGKILL) and reaped by pid in the
/// destructor if it is still there.
class piped_outbox {
public:
  explicit piped_outbox(const std::vector<std::string>& args) {
    auto argv = outbox_argv(args);
    std::vector<char*> raw;
    for (auto& a : argv)
      raw.push_back(a.data());
    raw.push_back(nullptr);
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_ = ::fork();
    if (pid_ < 0)
      throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(ends[1], STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    ::close(null);
    ::close(ends[1]);
    read_end_ = ends[0];
  }

  ~piped_outbox() {
    close_reader();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  piped_outbox(const piped_outbox&) = delete;
  piped_outbox& operator=(const piped_outbox&) = delete;

  /// The first line written, waiting at most `timeout_ms`; empty if none.
  std::string first_line(int timeout_ms) {
    std::string line;
    auto deadline = steady_clock::now() + milliseconds(timeout_ms);
    char c = 0;
    while (steady_clock::now() < deadline) {
      pollfd ready{read_end_, POLLIN, 0};
      if (::poll(&ready, 1, 100) <= 0)
        continue;
      if (::read(read_end_, &c, 1) != 1 || c == '\n')
        break;
      line += c;
    }
    return c == '\n' ? line : std::string{};
  }

  /// Closes the reading end: the reader is gone.
  void close_reader() {
    if (read_end_ >= 0)
      ::close(read_end_);
    read_end_ = -1;
  }

  /// The exit code once the process exits within `timeout_ms` (128 + the
  /// signal if a signal ended it); nothing if it is still running then.
  std::optional<int> exit_code_within(int timeout_ms) {
    auto deadline = steady_clock::now() + milliseconds(timeout_ms);
    int status = 0;
    while (steady_clock::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return std::nullopt;
  }

private:
  pid_t pid_ = -1;
  int read_end_ = -1;
};

std::int64_t connections_received(broker::connection& conn) {
  auto info = broker::reply_text(*conn.command({"INFO", "stats"}));
  const std::string field = "total_connections_received:";
  auto at = info.find(field);
  return at == std::string::npos ? -1
                                 : std::stoll(info.substr(at + field.size()));
}

class CliStatusWatch : public CliAudit {
protected:
  /// `status --watch` every `interval` seconds, each refresh logged on
  /// stderr ("refresh N"); `extra` flags after.
  std::vector<std::string> watch_args(const std::string& interval,
                                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
        "status",      "--watch", "--interval", interval,
        "--db",        db_path(), "--redis",    redis_.endpoint().to_string(),
        "--log-level", "debug"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  child_process start_watch(const std::string& interval) {
    return child_process{outbox_argv(watch_args(interval, {"--json"})),
                         dir_.path().string()};
  }
};

TEST_F(CliStatusWatch, StopsWhenItsReaderGoesAway) {
  place("apple", 2);
  // Text mode, as in `outbox status --watch | head -1`.
  piped_outbox watch{watch_args("0.05")};
  auto line = watch.first_line(10'000);
  EXPECT_FALSE(line.empty());
  watch.close_reader();
  auto start = steady_clock::now();
  auto code = watch.exit_code_within(5'000);
  ASSERT_TRUE(code) << "still writing to a closed pipe after 5 s";
  EXPECT_EQ(*code, 0) << "not killed by SIGPIPE: its documented exit";
  EXPECT_LT(steady_clock::now() - start, milliseconds(2'000));
}

TEST_F(CliStatusWatch, StopsPromptlyOnSigterm) {
  place("apple", 2);
  // A long interval: the stop must not wait for the next refresh.
  auto watch = start_watch("60");
  ASSERT_TRUE(watch.wait_for_stderr("refresh 1", 10'000));
  auto start = steady_clock::now();
  watch.signal(SIGTERM);
  ASSERT_TRUE(watch.exited_within(2'000));
  EXPECT_LT(steady_clock::now() - start, milliseconds(2'000));
  auto r = watch.wait(0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(CliStatusWatch, KeepsOneRedisConnection) {
  place("apple", 2);
  auto before = connections_received(conn_);
  ASSERT_GE(before, 1);
  auto watch = start_watch("0.05");
  ASSERT_TRUE(watch.wait_for_stderr("refresh 10", 20'000));
  watch.signal(SIGTERM);
  auto r = watch.wait(10'000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Ten refreshes or more; a connection each would be ten.
  EXPECT_LE(connections_received(conn_) - before, 2);
}

TEST_F(CliStatusWatch, AppendedFramesAreStampedAndSeparated) {
  place("apple", 2);
  // stdout is a file here, not a terminal: frames are appended.
  child_process watch{outbox_argv(watch_args("0.05")), dir_.path().string()};
  ASSERT_TRUE(watch.wait_for_stderr("refresh 3", 20'000));
  watch.signal(SIGTERM);
  auto r = watch.wait(10'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> stamps;
  std::size_t separators = 0;
  std::istringstream lines{r.out};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("outbox status at ", 0) == 0)
      stamps.push_back(line.substr(17));
    if (line.find_first_not_of('-') == std::string::npos && line.size() > 20)
      ++separators;
  }
  ASSERT_GE(stamps.size(), 3u) << r.out;
  EXPECT_EQ(separators, stamps.size() - 1) << "one line between two frames";
  // ISO 8601 UTC, to the millisecond: 2026-11-29T23:58:12.331Z.
  static const std::regex iso{R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"};
  for (const auto& stamp : stamps)
    EXPECT_TRUE(std::regex_match(stamp, iso)) << stamp;
  EXPECT_LE(stamps.front(), stamps.back());
  EXPECT_EQ(r.out.rfind("outbox status at ", 0), 0u) << "stamp comes first";
}

TEST_F(CliStatusWatch, EveryJsonLineHasItsTime) {
  place("apple", 2);
  auto watch = start_watch("0.05");
  ASSERT_TRUE(watch.wait_for_stderr("refresh 3", 20'000));
  watch.signal(SIGTERM);
  auto r = watch.wait(10'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines{r.out};
  std::int64_t previous = 0;
  int frames = 0;
  for (std::string line; std::getline(lines, line); ++frames) {
    auto frame = nlohmann::json::parse(line);
    auto ts_ms = frame.at("ts_ms").get<std::int64_t>();
    EXPECT_GE(ts_ms, previous);
    previous = ts_ms;
    EXPECT_EQ(frame.at("ts").get<std::string>().size(), 24u) << line;
  }
  EXPECT_GE(frames, 3);
}

TEST_F(CliStatusWatch, IntervalWithoutWatchIsRefused) {
  auto r = outbox_r({"status", "--interval", "5"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err,
              testing::HasSubstr(
                  "outbox: status --interval only applies with --watch"));
  EXPECT_EQ(r.out, "");
}

} // namespace
} // namespace outbox::test
