#include "storage/db_options.hpp"
#include "support/fast_config.hpp"
#include "support/pg_cut_proxy.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/sql_probe.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

// A COMMIT lost with its connection, on a real PostgreSQL: `outbox run`
// writes through pg_cut_proxy, which lets one group's COMMIT reach the
// server (it commits), drops the answer, closes both sockets and closes
// every new connection for 4 s. The writer cannot tell whether the group
// committed until it can ask; whatever it does, no event may be written
// twice, every event is applied once, and the report counts what is in
// the database.

namespace outbox::test {
namespace {

class E2ELostCommit : public ::testing::Test {
protected:
  void SetUp() override {
    std::ofstream{config_} << fast_config({{"lease", {{"max_attempts", 50}}}});
    auto init = run_outbox({"init", "--db", pg_.uri()}, dir());
    ASSERT_EQ(init.exit_code, 0) << init.err;
  }

  std::string dir() const { return dir_.path().string(); }

  /// The first COMMIT of a transaction that ran `statement`, then 4 s of
  /// closed doors.
  static pg_cut_proxy::plan cut_after(const std::string& statement) {
    pg_cut_proxy::plan p;
    p.statements = {statement};
    return p;
  }

  /// The server's URI with the proxy's port.
  std::string through(const pg_cut_proxy& proxy) const {
    auto uri = pg_.uri();
    auto port = ":" + std::to_string(pg_.port()) + "/";
    return uri.replace(uri.find(port), port.size(),
                       ":" + std::to_string(proxy.port()) + "/");
  }

  process_result run_through(const pg_cut_proxy& proxy,
                             const std::string& followup_share) {
    return run_outbox({"run", "--db", through(proxy), "--redis",
                       redis_.endpoint().to_string(), "--config", config_,
                       "--orders", "600", "--followup-share", followup_share,
                       "--relays", "2", "--consumers", "1", "--until-drained",
                       "--json"},
                      dir(), 180'000);
  }

  /// Nothing twice, everything once, an honest report, verify passes.
  void expect_written_once(const process_result& r, const pg_cut_proxy& proxy) {
    EXPECT_EQ(proxy.cuts_done(), 1) << "the cut never happened";
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto report = nlohmann::json::parse(r.out);
    EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
    EXPECT_GE(report.at("lost_commit_answers").at("requests").get<int>(), 1)
        << report.dump(2);

    auto sql = sql_probe::open(backend::postgres, db_options());
    // One event of each type per aggregate: a second OrderPaid or
    // OrderShipped would be a double effect.
    EXPECT_EQ(sql->scalar("SELECT count(*) FROM (SELECT aggregate_id,"
                          " event_type FROM outbox GROUP BY 1, 2"
                          " HAVING count(*) > 1) AS twice"),
              0);
    EXPECT_EQ(sql->scalar("SELECT count(*) FROM orders"), 600);
    // What the report says it wrote is what the database holds.
    EXPECT_EQ(report.at("orders_placed"), sql->scalar("SELECT count(*) FROM"
                                                      " orders"));
    EXPECT_EQ(report.at("orders_placed").get<std::int64_t>() +
                  report.at("events_appended").get<std::int64_t>(),
              sql->scalar("SELECT count(*) FROM outbox"))
        << report.dump(2);
    EXPECT_EQ(report.at("order_violations"), 0);

    auto verify =
        run_outbox({"verify", "--json", "--db", pg_.uri(), "--redis",
                    redis_.endpoint().to_string(), "--config", config_},
                   dir());
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }

  storage::db_options db_options() const {
    storage::db_options o;
    o.path = pg_.uri();
    return o;
  }

  temp_dir dir_{"outbox-lost-commit"};
  std::string config_ = dir_.file("run.json");
  pg_server pg_;
  redis_server redis_;
};

TEST_F(E2ELostCommit, AFollowUpGroupIsNeverAppendedTwice) {
  pg_cut_proxy proxy{pg_.port(), cut_after("append_events")};
  auto r = run_through(proxy, "1.0");
  expect_written_once(r, proxy);
}

TEST_F(E2ELostCommit, AKeyedOrderGroupIsNeverPlacedTwice) {
  pg_cut_proxy proxy{pg_.port(), cut_after("place_orders")};
  auto r = run_through(proxy, "0");
  expect_written_once(r, proxy);
}

} // namespace
} // namespace outbox::test
