#include "tests/actors/fakes.hpp"

#include "broker/inbox.hpp"
#include "tests/broker/inbox_cases.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>

// The actor tests trust fake_consume_port to apply entries as the inbox
// script does. Every case of the shared table runs against both, so a
// change to the script that the fake does not follow fails here.

namespace outbox::test {
namespace {

enum class side { fake, script };

using outcome = broker::applied_entry::outcome;

/// What one side left behind, read back the same way for both.
class inbox_under_test {
public:
  virtual ~inbox_under_test() = default;
  virtual broker::applied_entry apply(const std::string& entry) = 0;
  virtual std::int64_t reserved(const std::string& sku) = 0;
};

class fake_inbox : public inbox_under_test {
public:
  broker::applied_entry apply(const std::string& entry) override {
    return port_.apply(entry);
  }
  std::int64_t reserved(const std::string& sku) override {
    return broker_->reserved[sku];
  }

private:
  std::shared_ptr<fake_broker> broker_ = std::make_shared<fake_broker>();
  fake_consume_port port_{broker_};
};

class ActorFakeInbox
    : public redis_fixture,
      public ::testing::WithParamInterface<std::tuple<inbox_case, side>> {
protected:
  class script_inbox : public inbox_under_test {
  public:
    explicit script_inbox(ActorFakeInbox& test)
        : test_(test), box_(test.conn(), names_) {}
    broker::applied_entry apply(const std::string& entry) override {
      return box_.apply(entry);
    }
    std::int64_t reserved(const std::string& sku) override {
      return test_.hash_integer(names_.reserved, sku);
    }

  private:
    ActorFakeInbox& test_;
    broker::keys names_;
    broker::inbox box_;
  };

  std::unique_ptr<inbox_under_test> make(side s) {
    if (s == side::fake)
      return std::make_unique<fake_inbox>();
    return std::make_unique<script_inbox>(*this);
  }
};

TEST_P(ActorFakeInbox, EveryCaseGetsTheOutcomeOfTheTable) {
  const auto& [c, s] = GetParam();
  auto box = make(s);
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const auto& step = c.steps[i];
    auto got = box->apply(step.entry);
    EXPECT_EQ(got.result, step.expected) << "step " << i;
    if (step.expected == outcome::dead_lettered) {
      auto decodes_otherwise = s == side::fake && !step.decode_reason.empty();
      EXPECT_EQ(got.reason,
                decodes_otherwise ? step.decode_reason : step.reason)
          << "step " << i;
    }
    if (step.expected == outcome::applied) {
      EXPECT_EQ(got.order_violation, step.order_violation) << "step " << i;
    }
  }
  for (const auto& [sku, quantity] : c.reserved)
    EXPECT_EQ(box->reserved(sku), quantity) << sku;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ActorFakeInbox,
    ::testing::Combine(::testing::ValuesIn(inbox_cases()),
                       ::testing::Values(side::fake, side::script)),
    [](const auto& info) {
      return std::get<0>(info.param).name +
             (std::get<1>(info.param) == side::fake ? "_fake" : "_script");
    });

} // namespace
} // namespace outbox::test
