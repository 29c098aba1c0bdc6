#include "support/outbox_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// `outbox append`: a user's own events, any aggregate and type, on both
// backends: seqs allocated per aggregate, idempotent on --event-id, bad
// input refused before anything is written, and the events delivered by a
// run like the demo's. The real binary, a SQLite file or a private
// PostgreSQL cluster, a private redis-server.

namespace outbox::test {
namespace {

class E2EAppend : public ::testing::TestWithParam<backend> {
protected:
  process_result outbox(std::vector<std::string> args) const {
    auto command = args.front();
    args.erase(args.begin());
    return world_.outbox(command, args);
  }

  process_result append(const std::string& aggregate, const std::string& type,
                        const std::string& payload,
                        std::vector<std::string> more = {}) const {
    std::vector<std::string> args{"append", "--aggregate", aggregate, "--type",
                                  type,     "--payload",   payload,   "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return outbox(args);
  }

  /// Outbox rows, from status.
  std::int64_t rows() const {
    auto s = outbox({"status", "--json"});
    auto out = nlohmann::json::parse(s.out, nullptr, false);
    if (out.is_discarded())
      return -1;
    std::int64_t total = 0;
    for (const auto& [status, count] : out.at("outbox").at("by_status").items())
      total += count.get<std::int64_t>();
    return total;
  }

  outbox_world world_{GetParam(), "append"};
};

TEST_P(E2EAppend, AnyEventInItsAggregatesOrderOnceAndDelivered) {
  auto issued = append("invoice-7", "InvoiceIssued", R"({"amount":120})");
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  auto first = nlohmann::json::parse(issued.out);
  EXPECT_EQ(first.at("aggregate_id"), "invoice-7");
  EXPECT_EQ(first.at("seq"), 1);
  EXPECT_EQ(first.at("event_type"), "InvoiceIssued");
  EXPECT_FALSE(first.at("replayed").get<bool>());

  auto id = std::string{"0190f3a4-1111-7abc-8def-000000000001"};
  auto paid = append("invoice-7", "InvoicePaid", R"({"amount":120})",
                     {"--event-id", id});
  ASSERT_EQ(paid.exit_code, 0) << paid.err;
  EXPECT_EQ(nlohmann::json::parse(paid.out).at("seq"), 2);
  EXPECT_EQ(nlohmann::json::parse(paid.out).at("event_id"), id);

  // A retry after an unknown outcome: the same event, nothing new.
  auto again = append("invoice-7", "InvoicePaid", R"({"amount":120})",
                      {"--event-id", id});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto replayed = nlohmann::json::parse(again.out);
  EXPECT_TRUE(replayed.at("replayed").get<bool>());
  EXPECT_EQ(replayed.at("seq"), 2);
  // The same id for another event is refused, naming what it is.
  auto other = append("invoice-8", "InvoicePaid", R"({})", {"--event-id", id});
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_THAT(other.err, testing::HasSubstr("already names InvoicePaid of "
                                            "invoice-7"));
  EXPECT_EQ(rows(), 2);

  auto run = outbox({"run", "--until-drained", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto verify = outbox({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_P(E2EAppend, BadInputIsNamedAndWritesNothing) {
  world_.write_config({{"broker", {{"max_entry_bytes", 4096}}}});
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  struct bad {
    std::vector<std::string> args;
    std::string named;
  };
  std::vector<bad> cases{
      {{"--aggregate", "a-1", "--type", "T", "--payload", "[1]"},
       "payload must be a JSON object (got a JSON array)"},
      {{"--aggregate", "a-1", "--type", "T", "--payload", "{"},
       "not valid JSON"},
      {{"--aggregate", "a\x01", "--type", "T", "--payload", "{}"},
       "aggregate_id must be UTF-8 text without control characters"},
      {{"--aggregate", "a-1", "--type", "", "--payload", "{}"},
       "event_type must not be empty"},
      {{"--aggregate", "a-1", "--type", "T", "--payload", "{}", "--event-id",
        "42"},
       "event_id must be a UUID"},
      {{"--aggregate", "a-1", "--type", "OrderPlaced", "--payload",
        R"({"sku":"apple"})"},
       "an OrderPlaced the consumers would refuse: payload.qty"},
      {{"--aggregate", "a-1", "--type", "T"}, "needs --payload"},
      {{"--aggregate", "a-1", "--type", "T", "--payload",
        "{\"blob\":\"" + std::string(8000, 'x') + "\"}"},
       "over broker.max_entry_bytes (4096): the relays would refuse"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"append"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = outbox(args);
    EXPECT_EQ(r.exit_code, 2) << c.named << "\n" << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(c.named));
  }
  EXPECT_EQ(rows(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, E2EAppend,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
