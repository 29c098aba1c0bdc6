#include "metrics/run_report_json.hpp"

#include <gtest/gtest.h>

#include <string>

// The run report as a struct, written as JSON only where it leaves the
// process: the same bytes as the report the coordinator wrote before it
// was a struct (the texts below), and read back to the same bytes.

using namespace outbox;

namespace {

using check = metrics::audit_check;

/// An interrupted run of 2 relays and 1 consumer whose audit failed a
/// check, with every counter set and a message that is not UTF-8.
metrics::run_outcome interrupted_run() {
  metrics::run_outcome o;
  auto& s = o.final_state;
  s.orders = 5000;
  s.outbox_rows = 15000;
  s.pending = 1100;
  s.sending = 100;
  s.published = 13800;
  s.queued = 63;
  s.in_processing = 1;
  s.processed = 13700;
  s.duplicates = 12;
  s.dead_lettered = 2;
  s.order_violations = 1;
  metrics::audit_verdict v;
  v.outbox_rows = 15000;
  v.published = 13800;
  v.unpublished = 1200;
  v.processed = 13700;
  v.queued = 63;
  v.in_processing = 1;
  v.dead_lettered = 2;
  v.order_violations = 1;
  v.by_type["ItemAdded"] = {3, 2};
  v.by_type["OrderPlaced"] = {13797, 13698};
  v.checks = {{"published_processed", check::state::failed,
               "2 PUBLISHED rows never processed"},
              {"applied_once", check::state::skipped,
               "consumers applied events while Redis was read"},
              {"order_kept", check::state::passed, ""}};
  o.audit = v;
  o.failure = "relay-h-0-3 crashed: disk \xff\xfe full";
  o.seconds = 12.3456;
  o.relays = 2;
  o.consumers = 1;
  o.orders_target = 2000;
  o.interrupted = true;
  o.stranded_leases = "256 rows stay SENDING under the lease of a dead relay";
  return o;
}

void count_everything(metrics::run_metrics& m) {
  m.enqueued = 13900;
  m.relay_restarts = 1;
  m.consumer_restarts = 2;
  m.injected_crashes = 3;
  m.zombie_pauses = 4;
  m.fenced_acks_rejected = 5;
  m.expired_leases_dropped = 6;
  m.fenced_moves_refused = 7;
  m.recovered_entries = 8;
  m.lease_takeovers = 9;
  m.orders_placed = 1083;
  m.events_appended = 17;
  m.commits_unknown = 3;
  m.unknown_found_committed = 2;
  m.unknown_found_not_committed = 1;
  m.applied = 13688;
  m.commit_to_processed.record(12.04);
  m.commit_to_processed.record(3.5);
  m.commit_to_processed.record(40.25);
}

/// What the report of interrupted_run() was, byte for byte.
constexpr const char* interrupted_json =
    R"({"applied_here":13688,"audit":{"by_type":{"ItemAdded":{"processed":2,")"
    R"(published":3},"OrderPlaced":{"processed":13698,"published":13797}},"ch)"
    R"(ecks":[{"detail":"2 PUBLISHED rows never processed","name":"published_)"
    R"(processed","result":"failed"},{"detail":"consumers applied events whil)"
    R"(e Redis was read","name":"applied_once","result":"skipped"},{"detail":)"
    R"("","name":"order_kept","result":"passed"}],"dead_lettered":2,"failed_r)"
    R"(ows":0,"in_processing":1,"ok":false,"order_violations":1,"outbox_rows")"
    R"(:15000,"processed":13700,"published":13800,"queued":63,"unpublished":1)"
    R"(200},"audited":true,"consumer_restarts":2,"consumers":1,"dead_lettered)"
    R"(":2,"duplicates_absorbed":12,"enqueued":13900,"events_appended":17,"ex)"
    R"(pired_leases_dropped":6,"failed_rows":0,"fenced_acks_rejected":5,"fenc)"
    R"(ed_moves_refused":7,"final_state_error":"","injected_crashes":3,"inter)"
    R"(rupted":true,"latency_ms":{"p50":12.04,"p95":40.25,"p99":40.25,"sample)"
    R"(s":3},"lease_takeovers":9,"left_undone":{"entries_not_consumed":64,"or)"
    R"(ders_not_placed":917,"rows_not_published":1200},"lost_commit_answers":)"
    R"({"found_committed":2,"found_not_committed":1,"requests":3},"ok":false,)"
    R"("order_violations":1,"orders":5000,"orders_placed":1083,"orders_target)"
    R"(":2000,"outbox_rows":15000,"pending_rows":1100,"processed_unique":1370)"
    R"(0,"recovered_entries":8,"relay_restarts":1,"relays":2,"role":"run","se)"
    R"(conds":12.3456,"sending_rows":100,"stranded_leases":"256 rows stay SEN)"
    R"(DING under the lease of a dead relay","throughput":{"events_enqueued_p)"
    R"(er_s":1125.9072058061172,"events_processed_per_s":1108.735095904614,"o)"
    R"(rders_per_s":87.72356143079317},"violations":["relay-h-0-3 crashed: di)"
    R"(sk \ufffd\ufffd full","published_processed: 2 PUBLISHED rows never pro)"
    R"(cessed"],"zombie_pauses":4})";

/// What the report of a consumer service stopped with Redis out was.
constexpr const char* service_stop_json =
    R"({"applied_here":0,"audit":{},"audited":false,"consumer_restarts":0,"co)"
    R"(nsumers":1,"dead_lettered":0,"duplicates_absorbed":0,"enqueued":0,"eve)"
    R"(nts_appended":0,"expired_leases_dropped":0,"failed_rows":0,"fenced_ack)"
    R"(s_rejected":0,"fenced_moves_refused":0,"final_state_error":"Redis unav)"
    R"(ailable","injected_crashes":0,"interrupted":false,"latency_ms":{"p50":)"
    R"(0.0,"p95":0.0,"p99":0.0,"samples":0},"lease_takeovers":0,"lost_commit_)"
    R"(answers":{"found_committed":0,"found_not_committed":0,"requests":0},"o)"
    R"(k":true,"order_violations":0,"orders":0,"orders_placed":0,"orders_targ)"
    R"(et":0,"outbox_rows":0,"pending_rows":0,"processed_unique":0,"recovered)"
    R"(_entries":0,"relay_restarts":0,"relays":0,"role":"consume","seconds":0)"
    R"(.0,"sending_rows":0,"stranded_leases":"","throughput":{"events_enqueue)"
    R"(d_per_s":0.0,"events_processed_per_s":0.0,"orders_per_s":0.0},"violati)"
    R"(ons":[],"zombie_pauses":0})";

metrics::run_outcome service_stop() {
  metrics::run_outcome o;
  o.role = "consume";
  o.consumers = 1;
  o.audited = false;
  o.final_state.trouble = "Redis unavailable";
  return o;
}

TEST(MetricsRunReportJson, WritesTheSameBytesAsBeforeItWasAStruct) {
  metrics::run_metrics m;
  count_everything(m);
  EXPECT_EQ(metrics::to_json(metrics::run_report_of(interrupted_run(), m)),
            interrupted_json);
  metrics::run_metrics none;
  EXPECT_EQ(metrics::to_json(metrics::run_report_of(service_stop(), none)),
            service_stop_json);
}

TEST(MetricsRunReportJson, ReadsBackToTheSameBytes) {
  for (const char* text : {interrupted_json, service_stop_json}) {
    auto report = metrics::run_report_from_json(text);
    ASSERT_TRUE(report) << text;
    EXPECT_EQ(metrics::to_json(*report), text);
  }
}

TEST(MetricsRunReportJson, ReadsTheFieldsItsReadersUse) {
  auto report = metrics::run_report_from_json(interrupted_json);
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->ok);
  ASSERT_EQ(report->violations.size(), 2u);
  EXPECT_EQ(report->violations[1],
            "published_processed: 2 PUBLISHED rows never processed");
  EXPECT_DOUBLE_EQ(report->seconds, 12.3456);
  EXPECT_EQ(report->latency_ms.samples, 3);
  EXPECT_DOUBLE_EQ(report->latency_ms.p95, 40.25);
  ASSERT_TRUE(report->audit);
  EXPECT_FALSE(report->audit->ok());
  EXPECT_EQ(report->audit->by_type.at("OrderPlaced").processed, 13698);
  EXPECT_EQ(report->audit->checks[1].result, check::state::skipped);
  ASSERT_TRUE(report->undone);
  EXPECT_EQ(report->undone->orders_not_placed, 917);
  auto stop = metrics::run_report_from_json(service_stop_json);
  ASSERT_TRUE(stop);
  EXPECT_FALSE(stop->audit) << "an audit not run is written as {}";
  EXPECT_FALSE(stop->undone);
}

TEST(MetricsRunReportJson, HoldsMessagesAsItsJsonWritesThem) {
  // The text (run_report_text) and the JSON of one report say the same:
  // a byte that is not UTF-8 is U+FFFD in both.
  metrics::run_metrics m;
  auto report = metrics::run_report_of(interrupted_run(), m);
  EXPECT_EQ(report.violations[0],
            "relay-h-0-3 crashed: disk \uFFFD\uFFFD full");
  auto read_back = metrics::run_report_from_json(metrics::to_json(report));
  ASSERT_TRUE(read_back);
  EXPECT_EQ(read_back->violations, report.violations);
}

TEST(MetricsRunReportJson, RefusesTextThatIsNoJsonObject) {
  EXPECT_FALSE(metrics::run_report_from_json("[1, 2]"));
  EXPECT_FALSE(metrics::run_report_from_json("not json"));
  EXPECT_FALSE(metrics::run_report_from_json(""));
}

TEST(MetricsRunReportJson, LeavesWhatAnOddReportLacksAtItsDefault) {
  auto odd = metrics::run_report_from_json(
      R"({"violations": "x", "final_state_error": null, "relays": "2",)"
      R"( "audit": {"checks": [{"result": 3}]}})");
  ASSERT_TRUE(odd);
  EXPECT_TRUE(odd->violations.empty());
  EXPECT_EQ(odd->final_state_error, "");
  EXPECT_EQ(odd->relays, 0);
  ASSERT_TRUE(odd->audit);
  ASSERT_EQ(odd->audit->checks.size(), 1u);
  EXPECT_EQ(odd->audit->checks[0].name, "?");
  EXPECT_EQ(odd->audit->checks[0].result, check::state::skipped);
}

} // namespace
