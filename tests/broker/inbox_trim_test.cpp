#include "broker/inbox_trim.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "broker/inbox_reader.hpp"
#include "broker/older_reservation.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

std::string entry(const std::string& event_id, std::int64_t seq,
                  const std::string& type, const std::string& payload,
                  std::int64_t committed_at = 0) {
  return outbox::test::encoded_event(event_id, "order-1", seq, type, payload,
                                     committed_at);
}

/// Trimming dedup records: what leaves `processed` must leave its effect in
/// the trimmed summary, so the audit still adds up.
class BrokerInboxTrim : public redis_fixture {
protected:
  void SetUp() override {
    redis_fixture::SetUp();
    inbox box{conn(), names_};
    box.apply(entry("e1", 1, "OrderPlaced", R"({"sku":"A-1","qty":3})"));
    box.apply(entry("e2", 2, "OrderPaid", R"({"note":"paid"})"));
  }

  /// Later than every record written so far (Redis TIME, ms).
  std::int64_t after_all() {
    auto now = conn().command({"TIME"});
    return std::stoll(reply_text(*now->element[0])) * 1000 + 1000;
  }

  std::int64_t applied_at(const std::string& event_id) {
    return nlohmann::json::parse(hash_field(names_.processed, event_id))
        .at("at")
        .get<std::int64_t>();
  }

  keys names_;
};

} // namespace

TEST_F(BrokerInboxTrim, MovesTheEffectOfOldRecordsToTheSummary) {
  auto cutoff = after_all();
  inbox_trim trimmer{conn(), names_};
  auto done = trimmer.trim(cutoff, {"e1", "e2"});
  EXPECT_EQ(done.trimmed, 2);
  EXPECT_EQ(done.kept, 0);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_field(names_.processed, "e2"), "");
  EXPECT_EQ(hash_integer(names_.reserved, "A-1"), 3) << "the effect stays";
  EXPECT_EQ(hash_integer(names_.trimmed_reserved(), "A-1"), 3);
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "records"), 2);
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "before"), cutoff);

  auto inbox = read_inbox(conn(), names_);
  EXPECT_TRUE(inbox.processed.empty());
  EXPECT_EQ(inbox.trimmed_records, 2);
  EXPECT_EQ(inbox.trimmed_before, cutoff);
  EXPECT_EQ(inbox.trimmed_reserved.at("A-1"), 3);
  EXPECT_TRUE(inbox.consistent);
}

TEST_F(BrokerInboxTrim, KeepsRecordsAppliedAtOrAfterTheCutoff) {
  inbox_trim trimmer{conn(), names_};
  auto done = trimmer.trim(applied_at("e1"), {"e1", "e2"});
  EXPECT_EQ(done.trimmed, 0);
  EXPECT_EQ(done.kept, 2);
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "records"), 0);
  EXPECT_EQ(hash_field(names_.trimmed_summary(), "before"), "")
      << "a trim that removed nothing does not move the cutoff";
}

TEST_F(BrokerInboxTrim, KeepsWhatItCannotAccountFor) {
  conn().command({"HSET", names_.processed, "odd", "not a record"});
  conn().command({"HSET", names_.processed, "no-qty",
                  R"({"event_type":"OrderPlaced","at":1})"});
  inbox_trim trimmer{conn(), names_};
  auto done = trimmer.trim(after_all(), {"odd", "no-qty", "absent", "e1"});
  EXPECT_EQ(done.trimmed, 1);
  EXPECT_EQ(done.kept, 3);
  EXPECT_EQ(hash_field(names_.processed, "odd"), "not a record");
  EXPECT_NE(hash_field(names_.processed, "no-qty"), "");
}

TEST_F(BrokerInboxTrim, TheCutoffOnlyMovesForward) {
  inbox_trim trimmer{conn(), names_};
  auto late = after_all();
  // An hour ahead: the earlier cutoff below stays behind it however slow
  // the machine (a sanitizer build under load took over a second here).
  auto ahead = late + 3'600'000;
  trimmer.trim(late, {"e1"});
  trimmer.trim(ahead, {"e2"});
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "before"), ahead);
  inbox box{conn(), names_};
  box.apply(entry("e3", 3, "OrderShipped", R"({"note":"x"})"));
  trimmer.trim(applied_at("e3") + 1, {"e3"});
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "before"), ahead);
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "records"), 3);
}

TEST_F(BrokerInboxTrim, AWronglyTypedKeyChangesNothing) {
  conn().command({"SET", names_.trimmed_reserved(), "oops"});
  inbox_trim trimmer{conn(), names_};
  try {
    trimmer.trim(after_all(), {"e1"});
    FAIL() << "expected a rejected call";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_NE(std::string{e.what()}.find(names_.trimmed_reserved()),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
}

TEST_F(BrokerInboxTrim, ARedeliveryOfATrimmedEventIsStillADuplicate) {
  auto cutoff = after_all();
  inbox_trim trimmer{conn(), names_};
  ASSERT_EQ(trimmer.trim(cutoff, {"e1"}).trimmed, 1);
  // Copies the trim did not see come back (a zombie relay's late push):
  // the aggregate is already past seq 1, so they are duplicates whatever
  // their timestamps say; no clock is compared.
  inbox box{conn(), names_};
  for (std::int64_t committed_at :
       {std::int64_t{0}, cutoff - 5000, cutoff + 60'000}) {
    auto again = box.apply(entry("e1", 1, "OrderPlaced",
                                 R"({"sku":"A-1","qty":3})", committed_at));
    EXPECT_EQ(again.result, applied_entry::outcome::duplicate) << committed_at;
  }
  EXPECT_EQ(hash_integer(names_.reserved, "A-1"), 3) << "not reserved twice";
  EXPECT_EQ(hash_field(names_.processed, "e1"), "") << "stays trimmed";
  EXPECT_EQ(hash_integer(names_.counters, "duplicates"), 3);
}

TEST_F(BrokerInboxTrim, AJumpTooLongToRecordFallsBackToRecords) {
  // order-3 jumps from nothing to seq 2000: more skipped seqs than the
  // inbox records, so the aggregate is marked and its seqs below 2000 are
  // told by their records alone.
  inbox box{conn(), names_};
  auto of3 = [](const std::string& id, std::int64_t seq) {
    return outbox::test::encoded_event(id, "order-3", seq, "OrderPlaced",
                                       R"({"sku":"D-4","qty":1})");
  };
  EXPECT_TRUE(box.apply(of3("j2000", 2000)).order_violation);
  EXPECT_EQ(hash_field(names_.seq_gaps(), "order-3:overflow"), "1");
  EXPECT_EQ(hash_field(names_.seq_gaps(), "order-3:1"), "1");
  EXPECT_EQ(hash_field(names_.seq_gaps(), "order-3:1500"), "") << "not kept";
  auto late = box.apply(of3("j1500", 1500));
  EXPECT_EQ(late.result, applied_entry::outcome::applied);
  EXPECT_EQ(box.apply(of3("j1500", 1500)).result,
            applied_entry::outcome::duplicate);
  EXPECT_EQ(hash_integer(names_.reserved, "D-4"), 2);
}

TEST_F(BrokerInboxTrim, ARecordWhoseEffectCannotMoveStays) {
  conn().command({"HSET", names_.trimmed_reserved(), "A-1", "not a number"});
  inbox_trim trimmer{conn(), names_};
  auto done = trimmer.trim(after_all(), {"e1", "e2"});
  EXPECT_EQ(done.trimmed, 1);
  EXPECT_EQ(done.kept, 1);
  EXPECT_NE(hash_field(names_.processed, "e1"), "") << "its qty had nowhere";
  EXPECT_EQ(hash_field(names_.processed, "e2"), "");
  EXPECT_EQ(hash_integer(names_.trimmed_summary(), "records"), 1);
}

TEST_F(BrokerInboxTrim, ASkippedSeqArrivingAfterATrimIsStillApplied) {
  // order-2's seq 2 came first (an order violation): seq 1 was skipped.
  inbox box{conn(), names_};
  auto skip = [](const std::string& id, std::int64_t seq, std::int64_t at) {
    return outbox::test::encoded_event(id, "order-2", seq, "OrderPlaced",
                                       R"({"sku":"C-3","qty":1})", at);
  };
  auto cutoff = after_all();
  EXPECT_TRUE(box.apply(skip("s2", 2, cutoff - 9000)).order_violation);
  EXPECT_EQ(hash_field(names_.seq_gaps(), "order-2:1"), "1");
  inbox_trim trimmer{conn(), names_};
  ASSERT_EQ(trimmer.trim(cutoff, {"e1"}).trimmed, 1);

  // Seq 1 arrives late, committed before the cutoff, with no record: it is
  // a first delivery (a recorded gap), not a trimmed event's copy.
  auto late = box.apply(skip("s1", 1, cutoff - 9500));
  EXPECT_EQ(late.result, applied_entry::outcome::applied);
  EXPECT_TRUE(late.order_violation);
  EXPECT_EQ(hash_integer(names_.reserved, "C-3"), 2);
  EXPECT_EQ(hash_field(names_.seq_gaps(), "order-2:1"), "") << "filled";
}

// The reservation hash of a version before the reservation became an
// effect: named by the inbox's reading while it is left; merged (added
// field by field, then deleted) by a consumer as it starts, or left as it
// was when it cannot be added.
TEST_F(BrokerInboxTrim, TheReservationOfAnOlderVersionIsMergedOnce) {
  EXPECT_TRUE(read_inbox(conn(), names_).malformed.empty());
  conn().command({"HSET", "inventory.reserved", "A-1", "4", "B-2", "1"});
  auto inbox = read_inbox(conn(), names_);
  ASSERT_EQ(inbox.malformed.size(), 1u);
  EXPECT_EQ(inbox.malformed[0],
            "inventory.reserved is the reservation of an older outbox: a "
            "consumer of this version merges it into "
            "effects:inventory.reserved as it starts");
  EXPECT_EQ(merge_older_reservation(conn(), names_), 2);
  EXPECT_EQ(hash_integer(names_.reserved, "A-1"), 7);
  EXPECT_EQ(hash_integer(names_.reserved, "B-2"), 1);
  EXPECT_EQ(merge_older_reservation(conn(), names_), 0);
  EXPECT_EQ(hash_integer(names_.reserved, "A-1"), 7);
  EXPECT_TRUE(read_inbox(conn(), names_).malformed.empty());

  // Text HINCRBY would refuse half way (Lua's tonumber reads "0x10").
  conn().command({"HSET", "inventory.reserved", "A-1", "1", "C-3", "0x10"});
  EXPECT_THROW(merge_older_reservation(conn(), names_), broker_error);
  EXPECT_EQ(hash_integer(names_.reserved, "A-1"), 7) << "nothing added";
  EXPECT_EQ(conn().command({"EXISTS", "inventory.reserved"})->integer, 1);
}
