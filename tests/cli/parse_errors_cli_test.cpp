#include "tests/cli/cli_fixture.hpp"

#include <gmock/gmock.h>
#include <string>
#include <vector>

// Command-line mistakes, each answered in the tool's own words: one line on
// stderr starting "outbox: ", naming the flag and the command, exit 2, and
// nothing on stdout or on disk.

namespace outbox::test {
namespace {

using CliParseErrors = cli_fixture;

struct mistake {
  std::vector<std::string> args;
  std::string message;
};

TEST_F(CliParseErrors, EachMistakeIsOneClearLineAndExit2) {
  const std::vector<mistake> mistakes = {
      {{"run", "--redis", "127.0.0.1:1", "--redis", "127.0.0.1:2"},
       "outbox: --redis given twice (see outbox run --help)\n"},
      {{"status", "--config", "a.json", "--config", "b.json"},
       "outbox: --config given twice (see outbox status --help)\n"},
      {{"status", "--json=maybe"},
       "outbox: --json is a flag and takes no value, got 'maybe' (see outbox "
       "status --help)\n"},
      {{"run", "--bogus"},
       "outbox: unknown flag --bogus for outbox run (see outbox run "
       "--help)\n"},
      {{"run", "--bogus=3", "--also"},
       "outbox: unknown flags --bogus, --also for outbox run (see outbox run "
       "--help)\n"},
      {{"run", "--relay", "3"},
       "outbox: unknown flag --relay (did you mean --relays?) for outbox "
       "run; outbox run does not take the argument '3' (see outbox run "
       "--help)\n"},
      {{"relay", "--until-drianed"},
       "outbox: unknown flag --until-drianed (did you mean --until-drained?) "
       "for outbox relay (see outbox relay --help)\n"},
      {{"run", "--relays", "many"},
       "outbox: --relays expects an integer, got 'many' (see outbox run "
       "--help)\n"},
      {{"status", "extra"},
       "outbox: outbox status does not take the argument 'extra' (see outbox "
       "status --help)\n"},
      {{"place-order", "--qty", "1"},
       "outbox: outbox place-order needs --sku (see outbox place-order "
       "--help)\n"},
      {{"dead-letters", "replay", "--bogus"},
       "outbox: unknown flag --bogus for outbox dead-letters replay (see "
       "outbox dead-letters replay --help)\n"},
      {{"run", "--metrics-port", "70000"},
       "outbox: --metrics-port: value 70000 not in range 0 to 65535 (see "
       "outbox run --help)\n"},
  };
  for (const auto& m : mistakes) {
    auto r = outbox(m.args);
    EXPECT_EQ(r.exit_code, 2) << m.args[0] << ": " << r.err;
    EXPECT_EQ(r.err, m.message) << m.args[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

TEST_F(CliParseErrors, AFlagAtTheEndWithoutItsValueIsNamed) {
  // Run without the fixture's trailing --db, which would be taken as the
  // value.
  const std::vector<mistake> mistakes = {
      {{"run", "--relays"},
       "outbox: --relays needs a value: an integer (see outbox run --help)\n"},
      {{"purge", "--published-older-than"},
       "outbox: --published-older-than needs a value (see outbox purge "
       "--help)\n"},
      {{"status", "--db"},
       "outbox: --db needs a value (see outbox status --help)\n"},
  };
  for (const auto& m : mistakes) {
    auto r = run_outbox(m.args, dir_.path().string());
    EXPECT_EQ(r.exit_code, 2) << m.args[0] << ": " << r.err;
    EXPECT_EQ(r.err, m.message) << m.args[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(CliParseErrors, NoOrUnknownCommandListsTheCommands) {
  auto none = run_outbox({}, dir_.path().string());
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_EQ(none.err.rfind("outbox: no command given (commands: init ", 0), 0)
      << none.err;
  EXPECT_THAT(none.err, testing::HasSubstr("; see outbox --help)"));

  auto unknown = outbox({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_EQ(unknown.err.rfind("outbox: unknown command 'frobnicate' "
                              "(commands: init ",
                              0),
            0)
      << unknown.err;
}

TEST_F(CliParseErrors, ValuesAreEscapedInMessages) {
  auto r = outbox({"run", "--relays", "\x1b[2Jx"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "outbox: --relays expects an integer, got '\\e[2Jx' (see "
                   "outbox run --help)\n");
}

} // namespace
} // namespace outbox::test
