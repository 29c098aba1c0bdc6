#include "broker/broker_error.hpp"
#include "broker/dead_letters.hpp"
#include "broker/effects_check.hpp"
#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "support/build_paths.hpp"
#include "support/temp_dir.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <fstream>
#include <iterator>

// Effects of the user's own (consumer.effects_lua): a Lua file of
// functions by event type, run by the inbox script after the dedup check,
// reaching Redis only through keys under the effects' prefix; and the
// check a consumer makes of the file before it starts.

using namespace outbox::broker;
using outbox::test::encoded_event;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

const std::string prefix = "test:effects:";

/// Line 3 writes the amount; line 4 the traceparent it was given.
const std::string invoices = R"lua(local effects = {}
function effects.InvoiceIssued(event, store)
  store.call('HINCRBY', store.key('invoiced'), event.aggregate_id, event.payload.amount)
  store.call('SET', store.key('last_trace'), event.headers.traceparent or '-')
end
function effects.Stray(event, store)
  store.call('SET', 'elsewhere', '1')
end
function effects.Greedy(event, store)
  store.call('DEL', store.key('a'), 'pipeline:processed')
end
return effects
)lua";

std::string invoice(const std::string& id, const std::string& aggregate,
                    std::int64_t seq, int amount) {
  return encoded_event(id, aggregate, seq, "InvoiceIssued",
                       R"({"amount":)" + std::to_string(amount) + "}");
}

} // namespace

class BrokerInboxEffects : public outbox::test::inbox_fixture {
protected:
  inbox_options with(const std::string& source) {
    inbox_options options;
    options.effects = source;
    options.effects_name = "effects.lua";
    options.effects_prefix = prefix;
    return options;
  }

  /// A connection as the ACL user "consumer", who may run every command
  /// but `denied` ("-sadd"); the test deletes the user.
  connection consumer_without(const std::string& denied) {
    conn().command(
        {"ACL", "SETUSER", "consumer", "on", ">secret", "~*", "+@all", denied});
    auto options = server_->connection_options();
    options.username = "consumer";
    options.password = "secret";
    return connection{options};
  }

  /// Why the check refuses `source` as effects.lua, or "accepted".
  std::string refusal(const std::string& source) {
    try {
      check_effects(conn(), source, "effects.lua");
    } catch (const effects_error& e) {
      return std::string{e.what()};
    }
    return "accepted";
  }
};

TEST_F(BrokerInboxEffects, AnEffectIsAppliedOnceWithItsRecord) {
  inbox box{conn(), names_, {}, with(invoices)};
  auto first = box.apply(invoice("e1", "invoice-7", 1, 120));
  EXPECT_EQ(first.result, outcome::applied);
  EXPECT_EQ(box.apply(invoice("e1", "invoice-7", 1, 120)).result,
            outcome::duplicate);
  EXPECT_EQ(box.apply(invoice("e2", "invoice-7", 2, 30)).result,
            outcome::applied);
  EXPECT_EQ(hash_integer(prefix + "invoiced", "invoice-7"), 150);
  EXPECT_EQ(reply_text(*conn().command({"GET", prefix + "last_trace"})), "-");
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(counter("consumed"), 2);
  // A file replaces the built-in effects: an OrderPlaced is recorded,
  // nothing reserved.
  EXPECT_EQ(box.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 0);
}

TEST_F(BrokerInboxEffects, TheBuiltInReservationIsEffectsOrdersLua) {
  // By default (no options at all, as a consumer in another language calls
  // the script) and as a file of the user's, the same text does the same.
  std::ifstream in{outbox::test::source_dir() + "/effects/orders.lua"};
  std::string orders{std::istreambuf_iterator<char>{in}, {}};
  ASSERT_FALSE(orders.empty());
  for (int as_file = 0; as_file < 2; ++as_file) {
    conn().command({"FLUSHALL"});
    inbox_options options;
    if (as_file) {
      options = with(orders);
      options.effects_prefix = names_.effects_prefix();
    }
    inbox box{conn(), names_, {}, options};
    EXPECT_EQ(box.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
              outcome::applied);
    EXPECT_EQ(box.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
              outcome::duplicate);
    EXPECT_EQ(hash_integer("effects:inventory.reserved", "A"), 2) << as_file;
    // The record keeps what the effect returned, for `outbox verify`.
    auto record = json::parse(hash_field(names_.processed, "o1"));
    EXPECT_EQ(record.at("sku"), "A");
    EXPECT_EQ(record.at("qty"), 2);
    auto refused = box.apply(order_placed("o2", "order-2", 1, "", 1));
    EXPECT_EQ(refused.result, outcome::dead_lettered);
    EXPECT_THAT(refused.reason,
                HasSubstr("OrderPlaced: payload.sku must be a non-empty"));
  }
  // "" is none: an OrderPlaced is recorded, nothing reserved.
  conn().command({"FLUSHALL"});
  inbox_options none;
  none.effects = "";
  inbox box{conn(), names_, {}, none};
  EXPECT_EQ(box.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 0);
}

TEST_F(BrokerInboxEffects, WhatAnEffectReturnsIsKeptInItsRecord) {
  inbox box{conn(), names_, {}, with(R"lua(local effects = {}
function effects.Paid(event, store)
  return {amount = event.payload.amount, currency = 'EUR'}
end
function effects.Odd(event, store)
  store.call('SET', store.key('odd'), '1')
  return {seq = 7}
end
function effects.Text(event, store)
  return 'done'
end
return effects
)lua")};
  EXPECT_EQ(box.apply(encoded_event("e1", "p-1", 1, "Paid", R"({"amount":5})"))
                .result,
            outcome::applied);
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record.at("amount"), 5);
  EXPECT_EQ(record.at("currency"), "EUR");
  EXPECT_EQ(record.at("seq"), 1);
  // What a record cannot take (its own fields, anything but a table) is
  // left out and named in it: the effect ran, so the event is applied,
  // never set aside (a replay would apply it twice).
  EXPECT_EQ(box.apply(encoded_event("e2", "p-2", 1, "Odd", "{}")).result,
            outcome::applied);
  auto odd = json::parse(hash_field(names_.processed, "e2"));
  EXPECT_EQ(odd.at("seq"), 1);
  EXPECT_EQ(odd.at("fields_problem"),
            "effects.lua: Odd: returned a field named 'seq' (names are text, "
            "not event_type, aggregate_id, seq, at or fields_problem)");
  EXPECT_EQ(reply_text(*conn().command({"GET", prefix + "odd"})), "1");
  EXPECT_EQ(box.apply(encoded_event("e3", "p-3", 1, "Text", "{}")).result,
            outcome::applied);
  EXPECT_THAT(json::parse(hash_field(names_.processed, "e3"))
                  .at("fields_problem")
                  .get<std::string>(),
              HasSubstr("returned a string"));
  EXPECT_EQ(counter("dead_lettered"), 0);
}

TEST_F(BrokerInboxEffects, AKeyOutsideThePrefixSetsTheEventAsideNamingTheLine) {
  inbox box{conn(), names_, {}, with(invoices)};
  auto stray = encoded_event("e1", "s-1", 1, "Stray", "{}");
  auto got = box.apply(stray);
  ASSERT_EQ(got.result, outcome::dead_lettered);
  EXPECT_EQ(got.reason,
            "effect failed: effects.lua:7: key elsewhere is outside the"
            " effects' prefix test:effects: (name keys with store.key)");
  EXPECT_EQ(conn().command({"EXISTS", "elsewhere"})->integer, 0);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "") << "record undone";
  // Its aggregate goes on; a copy of it is a duplicate.
  auto next = box.apply(encoded_event("e2", "s-1", 2, "Other", "{}"));
  EXPECT_EQ(next.result, outcome::applied);
  EXPECT_FALSE(next.order_violation);
  EXPECT_EQ(box.apply(stray).result, outcome::duplicate);

  auto greedy = box.apply(encoded_event("e3", "g-1", 1, "Greedy", "{}"));
  ASSERT_EQ(greedy.result, outcome::dead_lettered);
  EXPECT_THAT(greedy.reason, HasSubstr("effects.lua:10: an effect runs DEL on"
                                       " one key at a time"));
}

TEST_F(BrokerInboxEffects, ARedisErrorSetsTheEventAsideUntilAReplay) {
  conn().command({"SET", prefix + "invoiced", "not a hash"});
  auto entry = invoice("e1", "invoice-7", 1, 120);
  {
    inbox box{conn(), names_, {}, with(invoices)};
    auto got = box.apply(entry);
    ASSERT_EQ(got.result, outcome::dead_lettered);
    EXPECT_THAT(got.reason,
                StartsWith("effect failed: effects.lua:3: WRONGTYPE"));
  }
  conn().command({"DEL", prefix + "invoiced"});
  auto put_back = replay_dead_letters(conn(), names_, {{"e1"}, false});
  ASSERT_EQ(put_back.replayed.size(), 1u);
  conn().command({"LPOP", put_back.replayed[0].queue});
  inbox box{conn(), names_, {}, with(invoices)};
  auto replayed = box.apply(entry);
  EXPECT_EQ(replayed.result, outcome::applied);
  EXPECT_FALSE(replayed.order_violation);
  EXPECT_EQ(box.apply(entry).result, outcome::duplicate);
  EXPECT_EQ(hash_integer(prefix + "invoiced", "invoice-7"), 120);
}

TEST_F(BrokerInboxEffects, TypesWithAnEffectAreKnownToTheDeadLetterPolicy) {
  auto options = with(invoices);
  options.unknown = unknown_types::dead_letter;
  inbox box{conn(), names_, {}, options};
  EXPECT_EQ(box.apply(invoice("e1", "invoice-7", 1, 5)).result,
            outcome::applied);
  auto unknown = box.apply(encoded_event("e2", "invoice-7", 2, "Paid", "{}"));
  EXPECT_EQ(unknown.result, outcome::dead_lettered);
  EXPECT_THAT(unknown.reason, StartsWith("unknown event type Paid"));
}

TEST_F(BrokerInboxEffects, TheCheckNamesWhatLuaRefusesWithTheLine) {
  EXPECT_EQ(check_effects(conn(), invoices, "effects.lua"),
            (std::vector<std::string>{"Greedy", "InvoiceIssued", "Stray"}));
  EXPECT_TRUE(check_effects(conn(), "return {}", "none.lua").empty());
  EXPECT_THAT(refusal("local e = {}\nfunction e.A(\nreturn e"),
              StartsWith("effects.lua:3: "));
  EXPECT_EQ(refusal("local e = {}"),
            "effects.lua must return a table of functions by event type"
            " (got a nil)");
  EXPECT_EQ(refusal("return {A = 7}"),
            "effects.lua: the effect of A must be a function (got a number)");
  EXPECT_EQ(refusal("return {function() end}"),
            "effects.lua: the table's keys must be event types (strings),"
            " not a number");
  // Any type, OrderPlaced too: a file replaces the built-in effects.
  EXPECT_EQ(check_effects(conn(), "return {OrderPlaced = function() end}",
                          "effects.lua"),
            std::vector<std::string>{"OrderPlaced"});
  EXPECT_THAT(refusal("\nerror('no config')"),
              StartsWith("effects.lua:2: no config"));
  // The chunk does not reach Redis but through `store`.
  EXPECT_THAT(refusal("redis.call('SET', 'x', '1')\nreturn {}"),
              AllOf(StartsWith("effects.lua:1: "), HasSubstr("redis")));
  EXPECT_EQ(conn().command({"EXISTS", "x"})->integer, 0);
  // The inbox refuses the same file the same way, changing nothing.
  inbox box{conn(), names_, {}, with("return {A = 7}")};
  try {
    box.apply(invoice("e1", "invoice-7", 1, 1));
    ADD_FAILURE() << "applied with a broken effects file";
  } catch (const broker_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("OUTBOX_EFFECTS effects.lua: the effect "
                                    "of A must be a function"));
  }
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
}

TEST_F(BrokerInboxEffects, TheFileReachesRedisOnlyThroughItsStore) {
  EXPECT_THAT(refusal("_G.redis.call('SET', 'x', '1')\nreturn {}"),
              StartsWith("effects.lua:1: "));
  EXPECT_THAT(refusal("loadstring('return 1')\nreturn {}"),
              StartsWith("effects.lua:1: "));
  EXPECT_EQ(conn().command({"EXISTS", "x"})->integer, 0);
  // A table that answers for every type through a metatable gives effects
  // to none: the inbox reads the plain copy the check read.
  const std::string anything =
      "return setmetatable({}, {__index = function()\n"
      "  return function(event, store) store.call('SET', store.key('hit'), "
      "'1') end\n"
      "end})";
  EXPECT_TRUE(check_effects(conn(), anything, "effects.lua").empty());
  inbox box{conn(), names_, {}, with(anything)};
  EXPECT_EQ(box.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
            outcome::applied);
  EXPECT_EQ(box.apply(invoice("e1", "invoice-7", 1, 5)).result,
            outcome::applied);
  EXPECT_EQ(conn().command({"EXISTS", prefix + "hit"})->integer, 0);
  EXPECT_EQ(reserved("A"), 0) << "a file replaces the built-in effects";
}

// Redis refusing an effect's command (here the consumer's ACL user lacks
// SADD): retried while the effect has made no call yet, so nothing of it
// is written twice; after one of its calls went through, set aside.
TEST_F(BrokerInboxEffects, ARefusedCommandIsRetriedOnlyBeforeTheEffectWrote) {
  auto limited = consumer_without("-sadd");
  const std::string source = R"lua(local effects = {}
function effects.First(event, store)
  store.call('SADD', store.key('tags'), 'x')
end
function effects.Later(event, store)
  store.call('HINCRBY', store.key('invoiced'), event.aggregate_id, 10)
  store.call('SADD', store.key('tags'), 'x')
end
return effects
)lua";
  inbox box{limited, names_, {}, with(source)};
  try {
    box.apply(encoded_event("e1", "a-1", 1, "First", "{}"));
    ADD_FAILURE() << "a refused first command was not retried";
  } catch (const broker_error& e) {
    EXPECT_THAT(e.what(), AnyOf(HasSubstr("NOPERM"), HasSubstr("can't run")));
  }
  EXPECT_EQ(hash_field(names_.processed, "e1"), "") << "record undone";
  EXPECT_EQ(list(names_.dead_letter).size(), 0u);

  auto later = box.apply(encoded_event("e2", "b-1", 1, "Later", "{}"));
  ASSERT_EQ(later.result, outcome::dead_lettered);
  EXPECT_THAT(later.reason, StartsWith("effect failed: effects.lua:7: "));
  EXPECT_THAT(later.reason, AnyOf(HasSubstr("NOPERM"), HasSubstr("can't run")));
  EXPECT_EQ(hash_integer(prefix + "invoiced", "b-1"), 10)
      << "written once, kept: Redis does not roll a script back";
  conn().command({"ACL", "DELUSER", "consumer"});
}

// An event's record is written after its effect: a user whose ACL would
// refuse that write (HSET) after the effect wrote would have the retry
// apply it again, so the call is refused before anything is written, and
// retried until the ACL is fixed.
TEST_F(BrokerInboxEffects,
       ARecordTheAclWouldRefuseStopsTheCallBeforeTheEffect) {
  auto limited = consumer_without("-hset");
  inbox box{limited, names_};
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      box.apply(order_placed("o1", "order-1", 1, "A", 2));
      ADD_FAILURE() << "applied without the right to record it";
    } catch (const broker_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("NOPERM")) << e.what();
    }
  }
  EXPECT_EQ(reserved("A"), 0) << "nothing written";
  EXPECT_EQ(hash_field(names_.processed, "o1"), "");
  conn().command({"ACL", "DELUSER", "consumer"});
  inbox fixed{conn(), names_};
  EXPECT_EQ(fixed.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
            outcome::applied);
  EXPECT_EQ(fixed.apply(order_placed("o1", "order-1", 1, "A", 2)).result,
            outcome::duplicate);
  EXPECT_EQ(reserved("A"), 2);
}

TEST(BrokerEffectsFile, IsReadWholeOrRefusedNamingThePath) {
  outbox::test::temp_dir dir{"outbox-effects"};
  auto good = dir.file("effects.lua");
  std::ofstream{good} << "return {}\n";
  EXPECT_EQ(read_effects_file(good), "return {}\n");
  auto missing = dir.file("missing.lua");
  EXPECT_THAT([&] { read_effects_file(missing); },
              ::testing::ThrowsMessage<effects_error>(
                  HasSubstr("cannot read " + missing)));
  auto latin = dir.file("latin.lua");
  std::ofstream{latin} << "-- caf\xe9\nreturn {}\n";
  EXPECT_THAT([&] { read_effects_file(latin); },
              ::testing::ThrowsMessage<effects_error>(
                  HasSubstr(latin + " is not UTF-8 text")));
  auto big = dir.file("big.lua");
  std::ofstream{big} << std::string(max_effects_bytes + 1, '-');
  EXPECT_THAT([&] { read_effects_file(big); },
              ::testing::ThrowsMessage<effects_error>(HasSubstr("over the")));
}
