#include "broker/broker_error.hpp"
#include "broker/inbox.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

// The inbox script run by a user whose ACL refuses a command it calls: the
// refusal is the ACL's, not the entry's, so nothing is applied, nothing is
// dead-lettered and no seq is marked; once the ACL is fixed the entry
// applies (or is dead-lettered) as it would have. Its own suite: ACL users
// outlive FLUSHALL.

namespace outbox::test {
namespace {

class BrokerInboxRefused : public inbox_fixture {
protected:
  /// A connection as user `app` with `rules` on top of every command and
  /// key.
  broker::connection as_app(const std::vector<std::string>& rules) {
    std::vector<std::string> argv{"ACL",     "SETUSER", "app", "reset", "on",
                                  ">secret", "~*",      "&*",  "+@all"};
    argv.insert(argv.end(), rules.begin(), rules.end());
    conn().command(argv);
    auto o = server_->connection_options();
    o.username = "app";
    o.password = "secret";
    return broker::connection{o};
  }

  /// Applies `entry` as `app`; true when the script was refused.
  bool refused(broker::connection& app, const std::string& entry) {
    broker::inbox box{app, names_};
    try {
      box.apply(entry);
    } catch (const broker::broker_error&) {
      return true;
    }
    return false;
  }

  std::string e1_ = order_placed("e1", "order-1", 1, "A", 2);
};

TEST_F(BrokerInboxRefused, ARefusedEffectIsRetriedNotDeadLettered) {
  auto app = as_app({"-hincrby"});
  EXPECT_TRUE(refused(app, e1_));
  EXPECT_TRUE(list(names_.dead_letter).empty());
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_field(names_.aggregate_seq, "order-1"), "");

  auto fixed = as_app({});
  EXPECT_FALSE(refused(fixed, e1_));
  EXPECT_EQ(reserved("A"), 2);
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
}

TEST_F(BrokerInboxRefused, APoisonEffectWhoseRecordIsRefusedMarksNothing) {
  conn().command({"HSET", names_.reserved, "A", "not-a-number"});
  auto app = as_app({"-rpush"});
  EXPECT_TRUE(refused(app, e1_));
  // Had the seq been marked dead first, the retry below would absorb the
  // entry as a copy of a dead-lettered one: lost, with no record.
  EXPECT_EQ(conn().command({"HLEN", names_.seq_gaps()})->integer, 0);
  EXPECT_EQ(hash_field(names_.aggregate_seq, "order-1"), "");
  EXPECT_TRUE(list(names_.dead_letter).empty());

  auto fixed = as_app({});
  broker::inbox box{fixed, names_};
  EXPECT_EQ(box.apply(e1_).result, outcome::dead_lettered);
  EXPECT_EQ(list(names_.dead_letter).size(), 1u);
}

} // namespace
} // namespace outbox::test
