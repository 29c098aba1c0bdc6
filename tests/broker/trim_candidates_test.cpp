#include "broker/trim_candidates.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "broker/server_time.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <string>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

std::string entry(const std::string& event_id, std::int64_t seq) {
  return outbox::test::encoded_event(event_id, "order-1", seq, "OrderPaid",
                                     "{}");
}

/// The delivered events' records a trim gathers: trimmed in batches unless
/// a copy of the event still waits in a list.
class BrokerTrimCandidates : public redis_fixture {
protected:
  void SetUp() override {
    redis_fixture::SetUp();
    inbox box{conn(), names_};
    for (int seq = 1; seq <= 5; ++seq)
      box.apply(entry("e" + std::to_string(seq), seq));
  }

  /// Later than every record written so far.
  std::int64_t after_all() { return server_time_ms(conn()) + 1000; }

  bool has_record(const std::string& event_id) {
    return !hash_field(names_.processed, event_id).empty();
  }

  keys names_;
};

} // namespace

TEST_F(BrokerTrimCandidates, TrimsInBatchesAndKeepsWhatStillWaitsInAList) {
  conn().command({"RPUSH", names_.partition(0), entry("e2", 2)});
  conn().command({"RPUSH", names_.processing_for(names_.partition(0), "c-1"),
                  entry("e4", 4)});
  trim_totals totals;
  totals.scanned = 6; // as the scan counted them
  trim_candidates gathered{conn(), names_, after_all(), 2, totals};
  gathered.add({"e1", "e2", "e3"});
  gathered.add({"e4", "e5", "e1"});
  EXPECT_EQ(totals.batches, 0) << "gathered, not trimmed yet";
  gathered.flush();
  EXPECT_EQ(totals.scanned, 5) << "e1 counted once";
  EXPECT_EQ(totals.kept_queued, 2);
  EXPECT_EQ(totals.trimmed, 3);
  EXPECT_EQ(totals.batches, 2) << "three records, two per call";
  EXPECT_EQ(totals.kept_other, 0);
  EXPECT_FALSE(has_record("e1"));
  EXPECT_TRUE(has_record("e2"));
  EXPECT_FALSE(has_record("e3"));
  EXPECT_TRUE(has_record("e4"));
  EXPECT_FALSE(has_record("e5"));
}

TEST_F(BrokerTrimCandidates, CountsRecordsGoneSinceAndRecordsTooYoung) {
  auto cutoff = after_all();
  trim_totals first_totals;
  trim_candidates first{conn(), names_, cutoff, 10, first_totals};
  first.add({"e1"});
  first.flush();
  // Named again after its trim (a scan may), and a record applied after
  // the cutoff: both kept by the script, only one of them still there.
  conn().command({"HSET", names_.processed, "late",
                  R"({"aggregate_id":"order-2","seq":1,"at":)" +
                      std::to_string(cutoff + 60'000) + "}"});
  trim_totals totals;
  totals.scanned = 2;
  trim_candidates again{conn(), names_, cutoff, 10, totals};
  again.add({"e1", "late"});
  again.flush();
  EXPECT_EQ(totals.trimmed, 0);
  EXPECT_EQ(totals.scanned, 1) << "the record gone was counted before";
  EXPECT_EQ(totals.kept_other, 1);
  EXPECT_TRUE(has_record("late"));
}

TEST_F(BrokerTrimCandidates, FlushingNothingReadsNoList) {
  trim_totals totals;
  trim_candidates gathered{conn(), names_, after_all(), 10, totals};
  conn().command({"CONFIG", "RESETSTAT"});
  gathered.flush();
  auto stats = reply_text(*conn().command({"INFO", "commandstats"}));
  EXPECT_THAT(stats, testing::Not(testing::HasSubstr("lrange")));
  EXPECT_EQ(totals.batches, 0);
}
