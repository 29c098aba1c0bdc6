#include "metrics/metrics_exporter.hpp"

#include <CivetServer.h>
#include <prometheus/text_serializer.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <utility>

namespace outbox::metrics {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct counter_spec {
  const char* name;
  const char* help;
  counter run_metrics::*value;
};

// clang-format off
const counter_spec counter_specs[] = {
  {"outbox_orders_placed_total", "Orders the writer committed (new, not replays).", &run_metrics::orders_placed},
  {"outbox_events_appended_total", "Follow-up events (OrderPaid, OrderShipped) the writer appended; OrderPlaced rows come with outbox_orders_placed_total.", &run_metrics::events_appended},
  {"outbox_commits_total", "Writer transactions committed.", &run_metrics::commits},
  {"outbox_writer_errors_total", "Writer transactions that failed.", &run_metrics::writer_errors},
  {"outbox_commits_unknown_total", "Requests whose group's COMMIT answer was lost with the connection.", &run_metrics::commits_unknown},
  {"outbox_unknown_found_committed_total", "Of those, found committed afterwards (lookup or replayed retry).", &run_metrics::unknown_found_committed},
  {"outbox_unknown_found_not_committed_total", "Of those, found not committed afterwards (lookup or retry written anew).", &run_metrics::unknown_found_not_committed},
  {"outbox_claims_total", "Lease claims the relays made.", &run_metrics::claims},
  {"outbox_claimed_rows_total", "Outbox rows the relays leased.", &run_metrics::claimed_rows},
  {"outbox_enqueued_total", "Entries the relays pushed to Redis.", &run_metrics::enqueued},
  {"outbox_acked_total", "Rows the relays marked PUBLISHED.", &run_metrics::acked},
  {"outbox_fenced_acks_rejected_total", "Acks refused because the lease had moved on (zombie relays).", &run_metrics::fenced_acks_rejected},
  {"outbox_expired_leases_dropped_total", "Rows not pushed because their lease ran out, by the relay's own clock, between claim and push.", &run_metrics::expired_leases_dropped},
  {"outbox_lease_takeovers_total", "Expired leases another relay took over.", &run_metrics::lease_takeovers},
  {"outbox_rows_failed_total", "Rows marked FAILED after max_attempts.", &run_metrics::rows_failed},
  {"outbox_publish_errors_total", "Publishes to Redis that failed.", &run_metrics::publish_errors},
  {"outbox_released_total", "Leased rows released unpublished (shutdown, errors).", &run_metrics::released},
  {"outbox_processed_total", "Entries the consumers applied for the first time.", &run_metrics::applied},
  {"outbox_duplicates_absorbed_total", "Redelivered entries the inbox recognised and skipped.", &run_metrics::duplicates_absorbed},
  {"outbox_dead_lettered_total", "Entries moved to the dead-letter list: malformed, their effect failed, or of an unknown type.", &run_metrics::dead_lettered},
  {"outbox_order_violations_total", "Events applied before a lower seq of their aggregate.", &run_metrics::order_violations},
  {"outbox_recovered_entries_total", "In-flight entries of dead consumers put back on their queues.", &run_metrics::recovered_entries},
  {"outbox_consumer_errors_total", "Consumer operations that failed.", &run_metrics::consumer_errors},
  {"outbox_fenced_moves_refused_total", "Consumer pops, applies, removes and recoveries the fence refused (this process's consumers' lock had gone elsewhere or lapsed).", &run_metrics::fenced_moves_refused},
  {"outbox_relay_restarts_total", "Relays the coordinator restarted.", &run_metrics::relay_restarts},
  {"outbox_consumer_restarts_total", "Consumers the coordinator restarted.", &run_metrics::consumer_restarts},
  {"outbox_injected_crashes_total", "Crashes injected by the crash.* settings.", &run_metrics::injected_crashes},
};
// clang-format on

MetricFamily family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

ClientMetric gauge_metric(double value,
                          std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  return m;
}

MetricFamily gauge_family(std::string name, std::string help, double value) {
  auto f = family(std::move(name), std::move(help), MetricType::Gauge);
  f.metric.push_back(gauge_metric(value));
  return f;
}

void add_store_families(std::vector<MetricFamily>& out,
                        const pipeline_snapshot& s) {
  auto rows = family("outbox_rows", "Outbox rows in the database, by status.",
                     MetricType::Gauge);
  const std::pair<const char*, std::int64_t> by_status[] = {
      {"PENDING", s.pending},
      {"SENDING", s.sending},
      {"PUBLISHED", s.published},
      {"FAILED", s.failed}};
  for (const auto& [status, count] : by_status)
    rows.metric.push_back(
        gauge_metric(static_cast<double>(count), {{"status", status}}));
  out.push_back(std::move(rows));
  out.push_back(gauge_family("outbox_orders", "Orders in the database.",
                             static_cast<double>(s.orders)));
  out.push_back(gauge_family("outbox_queue_entries",
                             "Entries waiting in the Redis queues.",
                             static_cast<double>(s.queued)));
  out.push_back(gauge_family(
      "outbox_processing_entries",
      "Entries popped by consumers and not yet removed (in flight).",
      static_cast<double>(s.in_processing)));
  out.push_back(gauge_family(
      "outbox_oldest_unpublished_age_seconds",
      "Age of the oldest PENDING or SENDING row (0 when none): how far the "
      "relays are behind.",
      static_cast<double>(s.oldest_unpublished_age_ms) / 1000.0));
  out.push_back(gauge_family(
      "outbox_dead_letter_entries",
      "Entries in the dead-letter list now (all processes), waiting for a "
      "replay or a drop decision; outbox status --check is unhealthy while "
      "any waits.",
      static_cast<double>(s.dead_letter_waiting)));
  out.push_back(gauge_family("outbox_processed",
                             "Event ids in the Redis processed set (all "
                             "processes).",
                             static_cast<double>(s.processed)));
}

MetricFamily latency_family(const char* name, const char* help,
                            const latency_summary& l) {
  auto f = family(name, help, MetricType::Histogram);
  ClientMetric m;
  m.histogram.sample_count = static_cast<std::uint64_t>(l.samples);
  m.histogram.sample_sum = l.sum / 1000.0;
  const auto& bounds = latency_bucket_bounds();
  for (std::size_t i = 0; i < bounds.size() && i < l.cumulative.size(); ++i)
    m.histogram.bucket.push_back(
        {static_cast<std::uint64_t>(l.cumulative[i]), bounds[i] / 1000.0});
  m.histogram.bucket.push_back({static_cast<std::uint64_t>(l.samples),
                                std::numeric_limits<double>::infinity()});
  f.metric.push_back(std::move(m));
  return f;
}

/// One path's answer, computed per request: a status and a text body.
class answering_handler : public CivetHandler {
public:
  struct answer {
    int status;
    std::string content_type;
    std::string body;
  };

  explicit answering_handler(std::function<answer()> respond)
      : respond_(std::move(respond)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    answer a;
    try {
      a = respond_();
    } catch (const std::exception& e) {
      a = {500, "text/plain; charset=utf-8", std::string{e.what()} + "\n"};
    }
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: "
              "%zu\r\nConnection: close\r\n\r\n",
              a.status, mg_get_response_code_text(conn, a.status),
              a.content_type.c_str(), a.body.size());
    mg_write(conn, a.body.data(), a.body.size());
    return true;
  }

private:
  std::function<answer()> respond_;
};

/// 200 "ok" when `check` holds (or is empty), else 503 and why.
answering_handler::answer health_answer(const health_check& check) {
  auto trouble = check ? check() : std::string{};
  if (trouble.empty())
    return {200, "text/plain; charset=utf-8", "ok\n"};
  return {503, "text/plain; charset=utf-8", trouble + "\n"};
}

/// Why `host`:`port` cannot be bound, in the system's words ("Address
/// already in use"); civetweb itself only says it has no context.
std::string bind_failure(const std::string& host, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return std::strerror(errno);
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(port);
  std::string why = "the HTTP server did not start";
  if (::inet_pton(AF_INET, host.c_str(), &where.sin_addr) != 1)
    why = "not an IPv4 address";
  else if (::bind(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0)
    why = std::strerror(errno);
  ::close(fd);
  return why;
}

/// civetweb gives each connection a thread of its own until its request is
/// read and answered. With one thread and the default 30 s timeout, one
/// idle TCP connection held every scrape back for 30 s. Several threads let
/// a scrape in beside a few idle or slow connections; the short timeout
/// frees a thread from one that sends nothing (a scraper on loopback or a
/// LAN sends its request at once), so even more of them than threads only
/// delay a scrape by about a second. No keep-alive: a scraper connects anew.
std::vector<std::string> server_options(const std::string& address) {
  // clang-format off
  return {"listening_ports",    address,
          "num_threads",        "8",
          "request_timeout_ms", "1000",
          "enable_keep_alive",  "no"};
  // clang-format on
}

} // namespace

std::vector<MetricFamily>
collect_metric_families(const run_metrics& metrics,
                        const pipeline_snapshot& snapshot) {
  std::vector<MetricFamily> out;
  for (const auto& spec : counter_specs) {
    auto f = family(spec.name, spec.help, MetricType::Counter);
    ClientMetric m;
    m.counter.value = static_cast<double>(
        (metrics.*spec.value).load(std::memory_order_relaxed));
    f.metric.push_back(std::move(m));
    out.push_back(std::move(f));
  }
  out.push_back(
      latency_family("outbox_commit_to_processed_seconds",
                     "Time from the order's commit to its event being "
                     "applied by a consumer.",
                     metrics.commit_to_processed.summary()));
  out.push_back(latency_family(
      "outbox_commit_to_published_seconds",
      "Time from the row's commit to Redis acknowledging its publish, "
      "recorded at the fenced ack.",
      metrics.commit_to_published.summary()));
  bool up = snapshot.trouble.empty();
  out.push_back(gauge_family("outbox_probe_up",
                             "1 when the database and Redis answered this "
                             "scrape's counts, 0 else (store gauges left out).",
                             up ? 1 : 0));
  if (up)
    add_store_families(out, snapshot);
  return out;
}

metrics_exporter::metrics_exporter(const std::string& host, std::uint16_t port,
                                   std::shared_ptr<const run_metrics> metrics,
                                   snapshot_source snapshot,
                                   health_checks checks)
    : address_(host + ":" + std::to_string(port)) {
  // Families are built from current values on each scrape.
  auto scrape = [metrics, snapshot]() -> answering_handler::answer {
    pipeline_snapshot snap;
    try {
      snap = snapshot();
    } catch (const std::exception& e) {
      snap.trouble = e.what();
    }
    return {200, "text/plain; version=0.0.4; charset=utf-8",
            prometheus::TextSerializer{}.Serialize(
                collect_metric_families(*metrics, snap))};
  };
  handlers_.push_back(std::make_unique<answering_handler>(scrape));
  handlers_.push_back(std::make_unique<answering_handler>(
      [alive = checks.alive] { return health_answer(alive); }));
  handlers_.push_back(std::make_unique<answering_handler>(
      [ready = checks.ready] { return health_answer(ready); }));
  try {
    server_ = std::make_unique<CivetServer>(server_options(address_));
  } catch (const CivetException&) {
    throw std::runtime_error("cannot listen on " + address_ +
                             " for metrics: " + bind_failure(host, port));
  }
  // Exact paths: "/metrics" alone, not "/metricsfoo" (civetweb matches a
  // handler's URI as a prefix unless it ends in "$").
  server_->addHandler("/metrics$", handlers_[0].get());
  server_->addHandler("/healthz$", handlers_[1].get());
  server_->addHandler("/readyz$", handlers_[2].get());
}

metrics_exporter::~metrics_exporter() {
  // Stopped (its threads joined) before the handlers it calls go.
  server_.reset();
}

std::string metrics_exporter::url() const {
  return "http://" + address_ + "/metrics";
}

} // namespace outbox::metrics
