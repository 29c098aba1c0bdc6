#include "metrics/run_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

// What `outbox run` prints without --json: what the JSON has, in English,
// rounded, this run's counters apart from the store-wide totals.

using namespace outbox;

namespace {

using check = metrics::audit_check;

/// An audit whose `checks` are all its findings.
metrics::audit_verdict audit_of(std::vector<check> checks) {
  metrics::audit_verdict v;
  v.checks = std::move(checks);
  return v;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A run of `relays` and `consumers` whose audit passed every check.
metrics::run_outcome audited_run(int relays, int consumers) {
  metrics::run_outcome o;
  o.relays = relays;
  o.consumers = consumers;
  o.audit = audit_of({{"published_processed", check::state::passed, "ok"},
                      {"order_kept", check::state::passed, ""}});
  return o;
}

TEST(MetricsRunReportText, SpeaksEnglishAndRounds) {
  auto o = audited_run(1, 1);
  o.seconds = 12.3456;
  o.final_state.orders = 1;
  o.final_state.outbox_rows = 1;
  o.final_state.published = 1;
  o.final_state.processed = 1;
  metrics::run_metrics m;
  m.orders_placed = 1;
  m.events_appended = 1;
  m.injected_crashes = 1;
  m.zombie_pauses = 2;
  auto text = metrics::run_report_text(metrics::run_report_of(o, m));
  EXPECT_EQ(text.rfind("run OK after 12.3 s with 1 relay and 1 consumer\n", 0),
            0u)
      << text;
  EXPECT_TRUE(
      has(text, "1 order placed, 2 events written (1 of them follow-ups)"))
      << text;
  EXPECT_TRUE(has(text, "injected faults: 1 crash, 2 zombie pauses")) << text;
  EXPECT_TRUE(has(text, "audit: 2 checks passed")) << text;
  EXPECT_FALSE(has(text, "12.3456")) << text;
}

TEST(MetricsRunReportText, EmptyLatencySamplesAreNotApplicable) {
  auto o = audited_run(0, 1);
  metrics::run_metrics m;
  auto text = metrics::run_report_text(metrics::run_report_of(o, m));
  EXPECT_TRUE(has(text, "commit-to-processed latency n/a")) << text;
  EXPECT_FALSE(has(text, "p50 0")) << text;
  m.commit_to_processed.record(12.04);
  text = metrics::run_report_text(metrics::run_report_of(o, m));
  EXPECT_TRUE(has(text, "p50 12.0 ms")) << text;
  EXPECT_TRUE(has(text, "(1 sample)")) << text;
}

TEST(MetricsRunReportText, SeparatesThisRunFromTheStore) {
  auto o = audited_run(2, 0);
  o.final_state.orders = 5000; // earlier runs' orders too
  o.final_state.outbox_rows = 15000;
  o.final_state.published = 15000;
  metrics::run_metrics m;
  m.orders_placed = 200;
  auto text = metrics::run_report_text(metrics::run_report_of(o, m));
  auto mine = text.find("this run (this process):\n  200 orders placed");
  auto store = text.find("store-wide (every process sharing the database and "
                         "Redis):\n  5000 orders, 15000 outbox rows: 15000 "
                         "published");
  EXPECT_NE(mine, std::string::npos) << text;
  EXPECT_NE(store, std::string::npos) << text;
  EXPECT_LT(mine, store) << text;
}

TEST(MetricsRunReportText, NamesTheChecksThatDidNotPass) {
  metrics::run_outcome o;
  o.audit = audit_of({{"published_processed", check::state::failed,
                       "2 PUBLISHED rows never processed"},
                      {"applied_once", check::state::skipped, "no ledger"},
                      {"order_kept", check::state::passed, ""}});
  metrics::run_metrics m;
  auto text = metrics::run_report_text(metrics::run_report_of(o, m));
  EXPECT_EQ(text.rfind("run FAILED", 0), 0u) << text;
  EXPECT_TRUE(has(text, "audit: 1 of 3 checks passed, 1 failed, 1 skipped"))
      << text;
  EXPECT_TRUE(has(text, "  failed published_processed: 2 PUBLISHED rows "
                        "never processed"))
      << text;
  EXPECT_TRUE(has(text, "VIOLATED: published_processed")) << text;
}

TEST(MetricsRunReportText, AnInterruptedRunSaysWhatItLeftUndone) {
  auto o = audited_run(2, 1);
  o.orders_target = 2000;
  o.interrupted = true;
  o.final_state.pending = 1100;
  o.final_state.sending = 100;
  o.final_state.queued = 63;
  o.final_state.in_processing = 1;
  metrics::run_metrics m;
  m.orders_placed = 1083;
  auto report = metrics::run_report_of(o, m);
  EXPECT_TRUE(report.ok) << "an interruption is no violation";
  auto text = metrics::run_report_text(report);
  EXPECT_EQ(text.rfind("run INTERRUPTED", 0), 0u) << text;
  auto undone = "917 of 2000 orders not placed, 1200 rows not published, 64 "
                "entries not consumed";
  EXPECT_TRUE(has(text, std::string{"left undone: "} + undone)) << text;
  EXPECT_EQ(metrics::run_report_interruption(report),
            std::string{"interrupted before the run drained; left undone: "} +
                undone);
  o.interrupted = false;
  EXPECT_EQ(metrics::run_report_interruption(metrics::run_report_of(o, m)), "");
}

TEST(MetricsRunReportText, RowsUnderADeadRelaysLeaseWaitForItToExpire) {
  metrics::run_outcome o;
  o.failure = "stalled behind FAILED rows: 1 FAILED rows block 256 later rows";
  o.stranded_leases = "256 rows stay SENDING under the lease of a dead relay "
                      "(relay-h-0-0): they wait for it to expire (in 7 s), "
                      "then a relay takes them over";
  metrics::run_metrics m;
  auto report = metrics::run_report_of(o, m);
  EXPECT_TRUE(has(metrics::run_report_text(report),
                  "note: 256 rows stay SENDING under the lease"));
  EXPECT_TRUE(has(metrics::run_report_failure(report), "wait for it to expire"))
      << metrics::run_report_failure(report);
}

} // namespace

namespace {

TEST(MetricsRunReportText, ARoleShowsOnlyThePartsThatRanInIt) {
  auto o = audited_run(2, 0);
  o.role = "relay";
  o.seconds = 10;
  metrics::run_metrics m;
  m.enqueued = 500;
  auto text = metrics::run_report_text(metrics::run_report_of(o, m));
  EXPECT_EQ(
      text.rfind("relay OK after 10.0 s with 2 relays and 0 consumers\n", 0),
      0u)
      << text;
  EXPECT_TRUE(has(text, "500 events enqueued by its relays: 50.0 events/s"))
      << text;
  EXPECT_FALSE(has(text, "orders/s")) << text;
  EXPECT_FALSE(has(text, "applied by its consumers")) << text;
  EXPECT_FALSE(has(text, "latency")) << text;
}

TEST(MetricsRunReportText, AServiceStopAnswersForItselfOnly) {
  // The stores hold someone else's trouble: an unbounded run does not
  // audit them, so neither that nor an unread final state fails it.
  metrics::run_outcome o;
  o.role = "consume";
  o.consumers = 1;
  o.audited = false;
  o.final_state.trouble = "Redis unavailable";
  metrics::run_metrics m;
  auto report = metrics::run_report_of(o, m);
  EXPECT_TRUE(report.ok) << metrics::run_report_failure(report);
  auto text = metrics::run_report_text(report);
  EXPECT_EQ(text.rfind("consume OK", 0), 0u) << text;
  EXPECT_TRUE(has(text, "audit: not run")) << text;
  EXPECT_TRUE(has(text, "not read: Redis unavailable")) << text;
  // Its own failure still fails it.
  o.failure = "restart budget spent";
  EXPECT_FALSE(metrics::run_report_of(o, m).ok);
}

} // namespace
