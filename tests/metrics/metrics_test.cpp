#include "metrics/metrics_exporter.hpp"

#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/scrape.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {
namespace {

/// A loopback socket bound to a port the kernel picked; listening if asked.
class loopback_socket {
public:
  explicit loopback_socket(bool listening)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (fd_ < 0 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        (listening && ::listen(fd_, 1) != 0))
      throw std::runtime_error("cannot bind a loopback socket");
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~loopback_socket() { close(); }

  int port() const { return port_; }
  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_;
  int port_ = 0;
};

/// A port nobody listens on now (the kernel's pick, released at once).
int free_port() {
  return loopback_socket{false}.port();
}

/// The body of a 200 answer to GET /metrics on 127.0.0.1; empty for any
/// other answer or none.
std::string scrape(int port) {
  auto response = scrape_response("127.0.0.1", port);
  auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos ||
      response.find(" 200 ") == std::string::npos)
    return {};
  return response.substr(body + 4);
}

/// The value of the sample `series` (name with its labels, as exposed).
std::optional<double> sample(const std::string& text,
                             const std::string& series) {
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

double value_or_zero(const std::string& text, const std::string& series) {
  return sample(text, series).value_or(0);
}

/// A series and the value it must have.
struct expected_sample {
  std::string series;
  double value;
};

/// Checks every one of `expected` against the samples in `text`.
void expect_samples(const std::string& text,
                    const std::vector<expected_sample>& expected) {
  for (const auto& e : expected)
    EXPECT_EQ(sample(text, e.series), e.value) << e.series;
}

/// The exposition text of `metrics` and `snapshot`, as /metrics serves it.
std::string exposed(const metrics::run_metrics& metrics,
                    const metrics::pipeline_snapshot& snapshot) {
  return prometheus::TextSerializer{}.Serialize(
      metrics::collect_metric_families(metrics, snapshot));
}

/// `outbox run --metrics-port` against a private redis-server.
class MetricsE2E : public ::testing::Test {
protected:
  void SetUp() override {
    std::ofstream{config_} << R"({
      "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 100,
              "consumer_block_ms": 50}
    })";
  }

  std::vector<std::string> run_args(int metrics_port) const {
    return {"run",
            "--relays",
            "1",
            "--consumers",
            "1",
            "--orders",
            "3000",
            "--followup-share",
            "0",
            "--rate",
            "1000",
            "--metrics-port",
            std::to_string(metrics_port),
            "--json",
            "--db",
            dir_.file("app.db"),
            "--redis",
            redis_.endpoint().to_string(),
            "--config",
            config_};
  }

  temp_dir dir_{"outbox-metrics"};
  std::string config_ = dir_.file("run.json");
  redis_server redis_;
};

TEST_F(MetricsE2E, ScrapesCountersAndStoreGaugesWhileRunning) {
  int port = free_port();
  child_process run{outbox_argv(run_args(port)), dir_.path().string()};
  auto url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  ASSERT_TRUE(run.wait_for_stderr("outbox run: metrics on " + url, 30'000));

  auto first = scrape(port);
  ASSERT_FALSE(first.empty());
  EXPECT_THAT(first, testing::HasSubstr("# TYPE outbox_claims_total counter"));
  EXPECT_THAT(first, testing::HasSubstr("# HELP outbox_acked_total "));
  EXPECT_THAT(first,
              testing::HasSubstr(
                  "# TYPE outbox_commit_to_processed_seconds histogram"));

  // 3000 orders at 1000/s: about 3 s; polled, bounded at 60 s.
  std::string last;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Queues empty too: under load a lease may run out after a publish, and
  // the row's second copy waits in a queue until the inbox absorbs it.
  auto done = [](const std::string& text) {
    return sample(text, "outbox_queue_entries") == 0.0 &&
           value_or_zero(text, "outbox_acked_total") >= 3000 &&
           value_or_zero(text, "outbox_processed_total") >= 3000 &&
           value_or_zero(text, "outbox_processed") >= 3000 &&
           value_or_zero(text, "outbox_rows{status=\"PUBLISHED\"}") >= 3000;
  };
  while (std::chrono::steady_clock::now() < deadline) {
    last = scrape(port);
    if (done(last))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(done(last)) << last;

  expect_samples(
      last, {{"outbox_orders_placed_total", 3000},
             {"outbox_events_appended_total", 0}, // no follow-ups
             {"outbox_acked_total", 3000},
             {"outbox_processed_total", 3000},
             {"outbox_processed", 3000},
             {"outbox_orders", 3000},
             {"outbox_rows{status=\"PENDING\"}", 0},
             {"outbox_rows{status=\"FAILED\"}", 0},
             {"outbox_queue_entries", 0},
             {"outbox_order_violations_total", 0},
             {"outbox_probe_up", 1},
             {"outbox_commit_to_processed_seconds_count", 3000},
             {"outbox_commit_to_published_seconds_count", 3000},
             {"outbox_oldest_unpublished_age_seconds", 0},
             {"outbox_commit_to_processed_seconds_bucket{le=\"+Inf\"}", 3000}});
  EXPECT_GT(value_or_zero(last, "outbox_claims_total"), 0);
  EXPECT_GT(value_or_zero(last, "outbox_commit_to_processed_seconds_sum"), 0);
  EXPECT_GT(value_or_zero(last, "outbox_commit_to_published_seconds_sum"), 0);
  // The values moved between the first scrape and the last.
  EXPECT_LT(value_or_zero(first, "outbox_acked_total"),
            value_or_zero(last, "outbox_acked_total"));
  EXPECT_LT(value_or_zero(first, "outbox_processed"),
            value_or_zero(last, "outbox_processed"));

  run.signal(SIGTERM);
  auto r = run.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).at("ok").get<bool>()) << r.out;
  EXPECT_TRUE(scrape(port).empty()); // the endpoint went with the process
}

TEST_F(MetricsE2E, IdleAndHalfSentConnectionsDoNotHoldAScrapeBack) {
  int port = free_port();
  child_process run{outbox_argv(run_args(port)), dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("outbox run: metrics on ", 30'000));

  // More connections than the endpoint has threads: some send nothing,
  // some stop in the middle of their request line or headers.
  struct sockets : std::vector<int> {
    ~sockets() {
      for (int fd : *this)
        ::close(fd);
    }
  } held;
  const std::string partial[] = {"GET /metr", "GET /metrics HTTP/1.1\r\n",
                                 "GET /metrics HTTP/1.1\r\nHost: 127"};
  for (int i = 0; i < 12; ++i) {
    int fd = connect_bounded("127.0.0.1", port);
    ASSERT_GE(fd, 0);
    held.push_back(fd);
    if (i % 2 == 1) {
      const auto& text = partial[i / 2 % 3];
      ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(text.size()));
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto text = scrape(port);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(text, testing::HasSubstr("outbox_claims_total"));
  // One civetweb thread and its 30 s default timeout took 30 s here.
  EXPECT_LT(took, std::chrono::seconds(3));

  run.signal(SIGTERM);
  auto r = run.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(MetricsE2E, BusyPortExits1AndStartsNothing) {
  loopback_socket busy{true};
  auto r = run_outbox(run_args(busy.port()), dir_.path().string(), 30'000);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("outbox run: cannot listen on 127.0.0.1:" +
                       std::to_string(busy.port()) +
                       " for metrics: Address already in use"),
            std::string::npos)
      << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("running;")));
  EXPECT_TRUE(r.out.empty()) << r.out;
  auto status =
      run_outbox({"status", "--json", "--db", dir_.file("app.db"), "--redis",
                  redis_.endpoint().to_string(), "--config", config_},
                 dir_.path().string());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(nlohmann::json::parse(status.out).at("outbox").at("orders"), 0);
}

TEST(MetricsFamilies, StoreTroubleLeavesStoreGaugesOut) {
  metrics::run_metrics metrics;
  metrics.acked = 7;
  metrics::pipeline_snapshot snapshot;
  snapshot.pending = 5;
  snapshot.trouble = "redis: connection refused";
  auto text = exposed(metrics, snapshot);
  expect_samples(text, {{"outbox_acked_total", 7}, {"outbox_probe_up", 0}});
  EXPECT_FALSE(sample(text, "outbox_rows{status=\"PENDING\"}").has_value())
      << text;

  snapshot.trouble.clear();
  expect_samples(exposed(metrics, snapshot),
                 {{"outbox_probe_up", 1},
                  {"outbox_rows{status=\"PENDING\"}", 5},
                  {"outbox_commit_to_processed_seconds_count", 0},
                  {"outbox_commit_to_published_seconds_count", 0}});

  snapshot.oldest_unpublished_age_ms = 2500;
  snapshot.dead_letter_waiting = 3;
  expect_samples(exposed(metrics, snapshot),
                 {{"outbox_dead_letter_entries", 3}});
  metrics.commit_to_published.record(40);
  // Buckets are cumulative: 40 ms is above 25 ms and within 50 ms.
  expect_samples(
      exposed(metrics, snapshot),
      {{"outbox_oldest_unpublished_age_seconds", 2.5},
       {"outbox_commit_to_published_seconds_count", 1},
       {"outbox_commit_to_published_seconds_sum", 0.04},
       {"outbox_commit_to_published_seconds_bucket{le=\"0.025\"}", 0},
       {"outbox_commit_to_published_seconds_bucket{le=\"0.05\"}", 1},
       {"outbox_commit_to_published_seconds_bucket{le=\"10\"}", 1}});

  metrics.commit_to_published.record_many({0.5, 3, 20000});
  // 20 s is past the last bound.
  expect_samples(
      exposed(metrics, snapshot),
      {{"outbox_commit_to_published_seconds_count", 4},
       {"outbox_commit_to_published_seconds_bucket{le=\"0.001\"}", 1},
       {"outbox_commit_to_published_seconds_bucket{le=\"0.005\"}", 2},
       {"outbox_commit_to_published_seconds_bucket{le=\"10\"}", 3},
       {"outbox_commit_to_published_seconds_bucket{le=\"+Inf\"}", 4}});
}

} // namespace
} // namespace outbox::test
