#include "broker/partitions_record.hpp"

#include "broker/broker_error.hpp"
#include "broker/keys.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <functional>
#include <string>

// The partition count the first relay or consumer process records, on a
// private Redis.

namespace outbox::test {
namespace {

class BrokerPartitionsRecord : public redis_fixture {
protected:
  static broker::keys with_partitions(std::size_t count) {
    broker::keys names;
    names.partitions = count;
    return names;
  }
};

TEST_F(BrokerPartitionsRecord, TheFirstCountIsKeptAndAnsweredToEveryone) {
  auto four = with_partitions(4);
  EXPECT_FALSE(broker::recorded_partitions(conn(), four).has_value());
  EXPECT_EQ(broker::record_partitions(conn(), four), 4u);
  EXPECT_EQ(broker::record_partitions(conn(), four), 4u);
  // A second process with another count learns the first one's; the
  // record stays.
  EXPECT_EQ(broker::record_partitions(conn(), with_partitions(2)), 4u);
  EXPECT_EQ(broker::recorded_partitions(conn(), four), 4u);
  EXPECT_EQ(four.partitions_record(), "outbox.events.partitions");
  EXPECT_EQ(
      broker::reply_text(*conn().command({"GET", "outbox.events.partitions"})),
      "4");
}

TEST_F(BrokerPartitionsRecord, OneAndZeroPartitionsAreOneList) {
  EXPECT_EQ(broker::record_partitions(conn(), with_partitions(0)), 1u);
  EXPECT_EQ(broker::record_partitions(conn(), with_partitions(1)), 1u);
}

TEST_F(BrokerPartitionsRecord, ARecordThatIsNotACountIsRejectedNamingTheKey) {
  auto names = with_partitions(4);
  for (const char* garbage : {"four", "0", "4x", "-1", ""}) {
    SCOPED_TRACE(garbage);
    conn().command({"SET", names.partitions_record(), garbage});
    try {
      broker::record_partitions(conn(), names);
      ADD_FAILURE() << "accepted";
    } catch (const broker::broker_error& e) {
      EXPECT_EQ(e.code(), broker::broker_errc::rejected);
      EXPECT_NE(std::string{e.what()}.find("outbox.events.partitions"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(BrokerPartitionsRecord, AgreementRecordsOursOrComparesWithTheRecord) {
  auto first = broker::agree_on_partitions(conn(), with_partitions(4));
  EXPECT_EQ(first.recorded, 4u);
  EXPECT_TRUE(first.agreed());
  EXPECT_EQ(first.unrecorded, "");
  auto other = broker::agree_on_partitions(conn(), with_partitions(2));
  EXPECT_EQ(other.ours, 2u);
  EXPECT_EQ(other.recorded, 4u);
  EXPECT_FALSE(other.agreed());
}

TEST_F(BrokerPartitionsRecord, ARedisTakingNoWriteIsComparedWithItsRecord) {
  // NOREPLICAS: writes refused for now, reads still answered. The server
  // serves the whole suite: writes are taken again however this ends.
  auto refuse_writes = [this](bool refuse) {
    conn().command(
        {"CONFIG", "SET", "min-replicas-to-write", refuse ? "1" : "0"});
  };
  struct writes_back {
    std::function<void(bool)> set;
    ~writes_back() { set(false); }
  } restore{refuse_writes};
  refuse_writes(true);
  auto nothing = broker::agree_on_partitions(conn(), with_partitions(2));
  EXPECT_FALSE(nothing.recorded);
  EXPECT_TRUE(nothing.agreed()) << "nothing to disagree with";
  EXPECT_NE(nothing.unrecorded, "");
  refuse_writes(false);
  broker::record_partitions(conn(), with_partitions(4));
  refuse_writes(true);
  auto seen = broker::agree_on_partitions(conn(), with_partitions(2));
  EXPECT_EQ(seen.recorded, 4u);
  EXPECT_FALSE(seen.agreed());
}

} // namespace
} // namespace outbox::test
