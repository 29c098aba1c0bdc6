#include "bench/relay_processes.hpp"

#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/process_cpu.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "storage/postgres/session.hpp"
#include "text/plural.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace outbox::bench {

namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

/// The config file the relay processes read: `s` with the bench's key
/// prefix, the real database URI and Redis password (the file is the
/// user's own, mode 0600 in the bench's 0700 folder).
std::string write_config(stage_context& ctx, const config::settings& s) {
  auto shown = ctx.space.for_processes(s);
  auto doc = nlohmann::json::parse(config::to_json(shown));
  doc["db"]["path"] = s.db.path;
  doc["redis"]["password"] = s.redis.password;
  auto path = (fs::path{ctx.space.folder()} / "relays.json").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error("relay stage: cannot write " + path);
  auto text = doc.dump(2);
  auto written = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()))
    throw std::runtime_error("relay stage: cannot write " + path);
  return path;
}

/// The relay processes of one measurement: stopped (SIGTERM, then SIGKILL
/// after 30 s) and reaped by pid when it goes out of scope.
class relay_processes {
public:
  relay_processes(const std::string& program, const std::string& config,
                  const std::string& folder, int count) {
    for (int i = 0; i < count; ++i) {
      auto log =
          (fs::path{folder} / ("relay-" + std::to_string(i) + ".log")).string();
      logs_.push_back(log);
      std::vector<std::string> args{
          program,           "run", "--config", config, "--relays",    "1",
          "--consumers",     "0",   "--orders", "0",    "--log-level", "warn",
          "--bench-keyspace"};
      std::vector<char*> argv;
      for (auto& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t files;
      posix_spawn_file_actions_init(&files);
      posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null",
                                       O_RDONLY, 0);
      posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
      posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
      pid_t pid = 0;
      int failed = ::posix_spawn(&pid, program.c_str(), &files, nullptr,
                                 argv.data(), environ);
      posix_spawn_file_actions_destroy(&files);
      if (failed != 0)
        throw std::runtime_error("relay stage: cannot start " + program);
      pids_.push_back(pid);
    }
  }

  ~relay_processes() {
    for (auto pid : pids_)
      ::kill(pid, SIGTERM);
    auto deadline = clock::now() + std::chrono::seconds(30);
    for (auto pid : pids_) {
      while (::waitpid(pid, nullptr, WNOHANG) == 0) {
        if (clock::now() > deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  relay_processes(const relay_processes&) = delete;
  relay_processes& operator=(const relay_processes&) = delete;

  /// Throws, with the end of its log, when a process has exited.
  void check_running() {
    for (std::size_t i = 0; i < pids_.size(); ++i) {
      int status = 0;
      if (::waitpid(pids_[i], &status, WNOHANG) != pids_[i])
        continue;
      pids_.erase(pids_.begin() + static_cast<std::ptrdiff_t>(i));
      std::ifstream in{logs_[i]};
      std::stringstream text;
      text << in.rdbuf();
      auto log = text.str();
      if (log.size() > 600)
        log = "..." + log.substr(log.size() - 600);
      throw std::runtime_error("relay stage: a relay process exited early (" +
                               std::to_string(WIFEXITED(status)
                                                  ? WEXITSTATUS(status)
                                                  : 128 + WTERMSIG(status)) +
                               "): " + log);
    }
  }

  /// CPU seconds of every process so far.
  std::vector<double> cpu_seconds() const {
    std::vector<double> seconds;
    for (auto pid : pids_)
      seconds.push_back(process_cpu_seconds(pid).value_or(0));
    return seconds;
  }

private:
  std::vector<pid_t> pids_;
  std::vector<std::string> logs_;
};

/// Where every meter stands at one moment.
struct reading {
  clock::time_point at;
  std::int64_t queued = 0;
  std::vector<double> relays;
  double server = 0;
  double redis = 0;
};

struct figures {
  double rate = 0;
  double relay_cores = 0;
  double server_cores = 0;
  double redis_cores = 0;
  double cpu_per_event_us = 0;
};

/// Runs `count` relay processes over `events` PENDING rows until all are
/// in Redis and PUBLISHED. Timed from the first entry in Redis to the
/// last, so process start-up is not counted.
figures run_relays(stage_context& ctx, const config::settings& s,
                   const std::string& program, int count, std::int64_t events) {
  auto postmaster = local_postmaster(s.db);
  broker::connection conn{s.redis};
  auto read = [&](relay_processes& relays) {
    reading r;
    r.at = clock::now();
    r.queued = broker::read_stats(conn, s.broker).queued_total();
    r.relays = relays.cpu_seconds();
    r.server = postmaster ? server_cpu_seconds(*postmaster) : 0;
    r.redis = redis_cpu_seconds(s);
    return r;
  };
  relay_processes relays{program, write_config(ctx, s), ctx.space.folder(),
                         count};
  auto deadline =
      clock::now() + std::chrono::seconds(ctx.scale.stage_timeout_s);
  std::optional<reading> first;
  reading last;
  for (;;) {
    relays.check_running();
    if (clock::now() > deadline)
      throw std::runtime_error(
          "relay stage: gave up waiting for " +
          text::plural(count, "relay process", "relay processes") +
          " to publish every row");
    auto queued = broker::read_stats(conn, s.broker).queued_total();
    if (!first && queued > 0)
      first = read(relays);
    if (queued >= events) {
      last = read(relays);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Pushed first, acked right after: wait for the acks (not timed).
  storage::postgres::session link{s.db};
  for (;;) {
    relays.check_running();
    auto left = link.exec("bench", "SELECT count(*) FROM outbox WHERE "
                                   "published_at IS NULL")
                    .int64(0, 0);
    if (left == 0)
      break;
    if (clock::now() > deadline)
      throw std::runtime_error("relay stage: " + std::to_string(left) +
                               " rows still unpublished with every entry "
                               "in Redis");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (last.queued != events)
    throw std::runtime_error("relay stage: " + std::to_string(events) +
                             " rows published but " +
                             std::to_string(last.queued) + " entries queued");
  auto seconds = std::chrono::duration<double>(last.at - first->at).count();
  auto moved = static_cast<double>(events - first->queued);
  if (seconds <= 0 || moved <= 0)
    throw std::runtime_error("relay stage: too few events to time");
  double relay_cpu = 0;
  for (std::size_t i = 0; i < last.relays.size(); ++i)
    relay_cpu += last.relays[i] - first->relays.at(i);
  figures f;
  f.rate = moved / seconds;
  f.relay_cores = relay_cpu / count / seconds;
  f.server_cores = (last.server - first->server) / seconds;
  f.redis_cores = (last.redis - first->redis) / seconds;
  f.cpu_per_event_us = 1e6 *
                       (relay_cpu + (last.server - first->server) +
                        (last.redis - first->redis)) /
                       moved;
  return f;
}

} // namespace

void measure_relay_processes(stage_context& ctx) {
  if (ctx.program.empty())
    throw std::runtime_error("relay stage: relay processes need the outbox "
                             "program, and none was given");
  auto events = ctx.scale.relay_events;
  for (int count : {1, 2, 4}) {
    auto shape = text::plural(count, "relay process", "relay processes");
    ctx.progress("relay: " + shape);
    auto s = ctx.space.fresh("relay");
    // Two events per aggregate, as orders with a follow-up.
    fill_outbox(s.db, events, events / 2, "PENDING", "relay");
    auto f = run_relays(ctx, s, ctx.program, count, events);
    auto id = "relay_" + std::to_string(count);
    ctx.out.add({"relay", id,
                 shape + " (outbox run --relays 1 --consumers 0 each), "
                         "PENDING to PUBLISHED and in Redis",
                 f.rate, "events/s", "relay_serial"},
                count == 1 ? ""
                           : "the ceiling is one relay doing its database "
                             "work and then its publish; " +
                                 shape +
                                 " overlap one's publish with another's "
                                 "claim and ack");
    ctx.out.add({"relay", id + "_cores",
                 shape + ": cores busy per relay process", f.relay_cores,
                 "cores", ""});
    ctx.out.add({"relay", id + "_cores_postgres",
                 shape + ": cores busy in the PostgreSQL server (0: not on "
                         "this machine)",
                 f.server_cores, "cores", ""});
    ctx.out.add({"relay", id + "_cores_redis",
                 shape + ": cores busy in redis-server", f.redis_cores, "cores",
                 ""});
    if (count == 1)
      ctx.out.add({"relay", "relay_cpu",
                   "CPU per event, 1 relay process (outbox + PostgreSQL + "
                   "Redis)",
                   f.cpu_per_event_us, "us", ""});
  }
  ctx.space.clear_redis();
}

} // namespace outbox::bench
