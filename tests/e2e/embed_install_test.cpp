#include "support/build_paths.hpp"
#include "support/outbox_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

// outbox as an application embeds it: `cmake --install` of this build,
// examples/append built against it with find_package(outbox) as a user
// would, run on a database `outbox init` made, and its events delivered by
// `outbox run` and accounted for by `outbox verify`. The real binaries, a
// SQLite file or a private PostgreSQL cluster, a private redis-server.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// The cmake on PATH, as a user would run it (run_process does not search
/// PATH).
std::string cmake_program() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin";
  for (std::size_t from = 0; from <= dirs.size();) {
    auto to = dirs.find(':', from);
    if (to == std::string::npos)
      to = dirs.size();
    auto candidate = fs::path{dirs.substr(from, to - from)} / "cmake";
    if (fs::exists(candidate))
      return candidate.string();
    from = to + 1;
  }
  return "/usr/bin/cmake";
}

class E2EEmbedInstall : public ::testing::TestWithParam<backend> {
protected:
  std::string db() const { return world_.db(); }

  process_result outbox(std::vector<std::string> args) const {
    auto command = args.front();
    args.erase(args.begin());
    return world_.outbox(command, args);
  }

  /// Installs this build under a prefix of the test's and builds the
  /// example against it; returns the example program.
  std::string build_example() const {
    auto build = fs::path{outbox_binary()}.parent_path().string();
    auto prefix = world_.dir().file("prefix");
    auto installed =
        run_process({cmake_program(), "--install", build, "--prefix", prefix});
    EXPECT_EQ(installed.exit_code, 0) << installed.out << installed.err;
    auto example = world_.dir().file("example");
    auto configured =
        run_process({cmake_program(), "-S", source_dir() + "/examples/append",
                     "-B", example, "-DCMAKE_PREFIX_PATH=" + prefix},
                    "", 120'000);
    EXPECT_EQ(configured.exit_code, 0) << configured.out << configured.err;
    auto built =
        run_process({cmake_program(), "--build", example}, "", 180'000);
    EXPECT_EQ(built.exit_code, 0) << built.out << built.err;
    return example + "/issue_invoice";
  }

  outbox_world world_{GetParam(), "embed"};
};

TEST_P(E2EEmbedInstall, AnApplicationBuiltWithFindPackageAppendsItsEvents) {
  auto program = build_example();
  ASSERT_TRUE(fs::exists(program)) << program;
  ASSERT_EQ(outbox({"init"}).exit_code, 0);

  auto issued = run_process({program, db(), "invoice-1", "120"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  EXPECT_EQ(nlohmann::json::parse(issued.out).at("seq"), 1);
  const std::string id = "0190f3a4-1111-7abc-8def-0000000000e1";
  auto second = run_process({program, db(), "invoice-1", "120", id});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out).at("seq"), 2);
  auto again = run_process({program, db(), "invoice-1", "120", id});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(nlohmann::json::parse(again.out).at("replayed").get<bool>());
  auto refused = run_process({program, db(), "invoice-2", "1", id});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, testing::HasSubstr("already names InvoiceIssued "
                                              "of invoice-1"));

  auto run = outbox({"run", "--until-drained", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto verify = outbox({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, E2EEmbedInstall,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
