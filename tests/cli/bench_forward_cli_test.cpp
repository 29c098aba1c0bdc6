#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

// `outbox bench` is the program outbox-bench, found next to the running
// outbox (cli/bench_forward.hpp): the same help, whichever way it is
// asked, and a clear refusal when outbox-bench is not there.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

TEST(CliBenchForward, OutboxBenchIsOutboxBenchEveryWayItIsAsked) {
  auto through_outbox = run_outbox({"bench", "--help"});
  ASSERT_EQ(through_outbox.exit_code, 0) << through_outbox.err;
  EXPECT_THAT(through_outbox.out,
              ::testing::HasSubstr("Usage: outbox bench [OPTIONS]"));
  EXPECT_THAT(through_outbox.out, ::testing::HasSubstr("--soak"));
  auto bench_binary = (fs::path{build_dir()} / "outbox-bench").string();
  auto direct = run_process({bench_binary, "--help"});
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(direct.out, through_outbox.out);
  auto help = run_outbox({"help", "bench"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out, through_outbox.out);
  // Its errors too: a flag outbox-bench does not know.
  auto unknown = run_outbox({"bench", "--no-such-flag"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, ::testing::HasSubstr("--no-such-flag"));
}

TEST(CliBenchForward, WithoutOutboxBenchItExits127NamingThePath) {
  // A copy of outbox alone in a folder: /proc/self/exe names the copy, so
  // outbox-bench is looked for beside it.
  temp_dir dir{"outbox-bench-missing"};
  auto lone = dir.path() / "outbox";
  fs::copy_file(outbox_binary(), lone);
  auto r = run_process({lone.string(), "bench", "--quick"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err,
              ::testing::HasSubstr("outbox bench: cannot run " +
                                   (dir.path() / "outbox-bench").string() +
                                   ": No such file or directory"));
  // The other commands do not need it.
  EXPECT_EQ(run_process({lone.string(), "--version"}).exit_code, 0);
}

} // namespace
} // namespace outbox::test
