// `outbox trim` and `outbox verify` on a store of many records: still
// correct, and their memory bounded by their pages, not by the data.

#include "tests/cli/initialised_fixture.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "storage/types.hpp"
#include "support/pipeline_keys.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

constexpr storage::millis day = 24 * 60 * 60 * 1000;
#ifdef __SANITIZE_ADDRESS__
// The sanitizers' shadow memory dwarfs what is measured here, and their
// build runs slowly: fewer events, and no bound on memory.
constexpr int events = 10'000;
constexpr bool measures_memory = false;
#else
constexpr int events = 50'000;
constexpr bool measures_memory = true;
#endif
/// Peak RSS allowed to one trim of `events` records next to as many queued
/// entries. Before paging, trim read every list whole and kept every id it
/// scanned: 33 MB with nothing to trim, 39 MB trimming all but 100; paged,
/// 10 and 17 MB (SQLite's page cache, which grows with the rows looked up
/// up to cache_size, is most of the difference).
constexpr long peak_rss_bound_kb = 25 * 1024;

/// Peak RSS allowed to one verify of `events` events. Keeping every outbox
/// row and every record, verify took 53 MB (62 MB when a row looked
/// unprocessed and it read Redis again); with the snapshots in temporary
/// tables on disk, 22 MB (the database's page cache is most of it).
constexpr long verify_rss_bound_kb = 30 * 1024;

/// A store written in bulk (one SQLite transaction, Redis commands of 1000
/// fields each): `events` OrderPlaced rows e-<i> of aggregates o-<i>, their
/// dedup records and reservations, and queue entries.
class CliLargeStore : public initialised_fixture {
protected:
  static std::string event_id(int i) { return "e-" + std::to_string(i); }
  static std::string aggregate_id(int i) { return "o-" + std::to_string(i); }

  /// Every event published and applied at `at`: rows, records, reservation.
  void delivered(storage::millis at) {
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    SQLite::Transaction all{db};
    SQLite::Statement insert{
        db, "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
            " payload, status, created_at, published_at)"
            " VALUES (?, ?, 1, 'OrderPlaced', '{\"sku\":\"apple\",\"qty\":1}',"
            " 'PUBLISHED', ?, ?)"};
    for (int i = 0; i < events; ++i) {
      insert.reset();
      insert.bind(1, event_id(i));
      insert.bind(2, aggregate_id(i));
      insert.bind(3, at);
      insert.bind(4, at);
      insert.exec();
    }
    all.commit();

    in_chunks({"HSET", names_.processed}, [&](int i) {
      return std::vector<std::string>{
          event_id(i), nlohmann::json{{"event_type", "OrderPlaced"},
                                      {"aggregate_id", aggregate_id(i)},
                                      {"seq", 1},
                                      {"at", at},
                                      {"sku", "apple"},
                                      {"qty", 1}}
                           .dump()};
    });
    conn_.command({"HSET", names_.reserved, "apple", std::to_string(events)});
    // What the inbox script keeps beside each record: its aggregate's
    // applied seq (verify tells a trimmed record from a lost event by it).
    in_chunks({"HSET", names_.aggregate_seq}, [&](int i) {
      return std::vector<std::string>{aggregate_id(i), "1"};
    });
  }

  /// A backlog in the queue: `events` entries, the first `copies` of them
  /// copies of e-0, e-1... (delivered again), the others events no record
  /// names yet.
  void backlog(int copies) {
    in_chunks({"RPUSH", names_.partition(0)}, [&](int i) {
      broker::event_entry entry{
          i < copies ? event_id(i) : "waiting-" + std::to_string(i),
          aggregate_id(i),
          1,
          "OrderPlaced",
          R"({"sku":"apple","qty":1,"note":"an order placed long ago, still queued"})",
          now_ - 10 * day,
          now_ - 10 * day};
      return std::vector<std::string>{broker::encode(entry)};
    });
  }

  /// Sends `head` followed by the arguments of 1000 events at a time: one
  /// command at a time, so that this process stays small (a child's peak
  /// RSS counts the pages it shared with us before exec).
  template <class Args>
  void in_chunks(const std::vector<std::string>& head, Args args_of) {
    for (int from = 0; from < events; from += 1000) {
      auto command = head;
      for (int i = from; i < from + 1000; ++i)
        for (auto& arg : args_of(i))
          command.push_back(std::move(arg));
      conn_.command(command);
    }
  }

  /// This process's anonymous resident memory, in KiB: what a child shares
  /// until it execs (its code is mapped from files and is not copied). A
  /// bound on the children's peak RSS below it would measure nothing.
  static long own_rss_kb() {
    std::ifstream status{"/proc/self/status"};
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("RssAnon:", 0) == 0)
        return std::stol(line.substr(8));
    return 0;
  }

  static void expect_small_peak(const process_result& r,
                                long bound_kb = peak_rss_bound_kb) {
    if (!measures_memory)
      return;
    ASSERT_LT(own_rss_kb(), bound_kb / 2)
        << "the test process is too large to measure its children";
    EXPECT_LT(r.peak_rss_kb, bound_kb);
  }

  /// How many LRANGE calls Redis has served since it started.
  long lrange_calls() {
    auto info = broker::reply_text(*conn_.command({"INFO", "commandstats"}));
    std::smatch calls;
    if (!std::regex_search(info, calls,
                           std::regex{"cmdstat_lrange:calls=([0-9]+)"}))
      return 0;
    return std::stol(calls[1]);
  }

  std::int64_t hash_length(const std::string& key) {
    return conn_.command({"HLEN", key})->integer;
  }

  /// The defaults the binary runs with (four partitions).
  broker::keys names_ = default_pipeline_keys();
  storage::millis now_ = storage::wall_clock_now();
};

} // namespace

TEST_F(CliLargeStore, ATrimWithNothingOldEnoughReadsNoList) {
  delivered(now_ - day / 24);
  backlog(0);

  auto r = outbox_r({"trim", "--processed-older-than", "7d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("scanned"), events);
  EXPECT_EQ(out.at("kept_young"), events);
  EXPECT_EQ(out.at("trimmed"), 0);
  EXPECT_EQ(lrange_calls(), 0) << "no record to trim: no list is read";
  expect_small_peak(r);
  EXPECT_EQ(hash_length(names_.processed), events);
}

TEST_F(CliLargeStore, ATrimOfManyRecordsKeepsToItsPagesAndVerifyStillHolds) {
  delivered(now_ - 10 * day);
  auto before = outbox_r({"verify", "--json"});
  EXPECT_EQ(before.exit_code, 0) << before.out << before.err;
  EXPECT_TRUE(json_of(before).at("ok")) << before.out;
  EXPECT_EQ(json_of(before).at("processed"), events);

  // 100 of them still have a copy waiting, behind a long backlog.
  constexpr int copies = 100;
  backlog(copies);
  auto r = outbox_r({"trim", "--processed-older-than", "7d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("trimmed"), events - copies);
  EXPECT_GE(out.at("kept_queued"), copies);
  EXPECT_EQ(out.at("scanned").get<long>(),
            out.at("trimmed").get<long>() + out.at("kept_queued").get<long>() +
                out.at("kept_young").get<long>() +
                out.at("kept_unpublished").get<long>() +
                out.at("kept_other").get<long>());
  expect_small_peak(r);
  ASSERT_EQ(hash_length(names_.processed), copies);
  for (int i = 0; i < copies; ++i)
    EXPECT_EQ(
        conn_.command({"HEXISTS", names_.processed, event_id(i)})->integer, 1)
        << event_id(i) << " is still queued: its record stays";

  auto after = outbox_r({"verify", "--json"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_TRUE(json_of(after).at("ok")) << after.out;
  EXPECT_EQ(json_of(after).at("processed"), copies);
  expect_small_peak(after, verify_rss_bound_kb);

  // Once the queue is gone, every other published row lacks its record and
  // counts as trimmed by its aggregate's applied seq (one field per
  // aggregate).
  conn_.command({"DEL", names_.partition(0)});
  auto drained = outbox_r({"verify", "--json"});
  EXPECT_EQ(drained.exit_code, 0) << drained.out << drained.err;
  auto checks = json_of(drained).at("checks");
  ASSERT_EQ(checks.at(0).at("name"), "published_processed");
  EXPECT_EQ(checks.at(0).at("result"), "passed");
  EXPECT_NE(checks.at(0).at("detail").get<std::string>().find(
                std::to_string(events - copies) + " published before"),
            std::string::npos)
      << checks.at(0);
  expect_small_peak(drained, verify_rss_bound_kb);
}

TEST_F(CliLargeStore, VerifyOfManyEventsKeepsToItsPagesAndStillFindsALoss) {
  delivered(now_ - day);
  auto clean = outbox_r({"verify", "--json"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  auto passed = json_of(clean);
  EXPECT_TRUE(passed.at("ok")) << clean.out;
  EXPECT_EQ(passed.at("published"), events);
  EXPECT_EQ(passed.at("processed"), events);
  expect_small_peak(clean, verify_rss_bound_kb);

  // A published row whose record is missing, and a record without a row.
  {
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
            " payload, status, created_at, published_at)"
            " VALUES ('lost', 'o-lost', 1, 'OrderPaid', '{}', 'PUBLISHED', " +
            std::to_string(now_) + ", " + std::to_string(now_) + ")");
  }
  conn_.command({"HSET", names_.processed, "orphan",
                 R"({"event_type":"OrderPaid","aggregate_id":"o-orphan",)"
                 R"("seq":1,"at":1})"});
  auto r = outbox_r({"verify", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto out = json_of(r);
  EXPECT_FALSE(out.at("ok"));
  std::map<std::string, nlohmann::json> checks;
  for (const auto& c : out.at("checks"))
    checks[c.at("name")] = c;
  EXPECT_EQ(checks["published_processed"].at("result"), "failed");
  EXPECT_EQ(
      checks["published_processed"].at("detail"),
      "1 published events lost: not applied, in no queue, "
      "processing list or dead-letter list, and dropped by no decision: lost");
  EXPECT_EQ(checks["no_orphan_effects"].at("result"), "failed");
  EXPECT_EQ(checks["no_orphan_effects"].at("detail"),
            "1 processed events without an outbox row: orphan");
  EXPECT_EQ(checks["reserved_matches"].at("result"), "passed")
      << checks["reserved_matches"];
  EXPECT_EQ(checks["applied_once"].at("result"), "passed")
      << checks["applied_once"];
  EXPECT_EQ(checks["order_kept"].at("result"), "passed");
  expect_small_peak(r, verify_rss_bound_kb);
}

} // namespace outbox::test
