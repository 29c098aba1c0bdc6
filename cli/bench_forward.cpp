#include "cli/bench_forward.hpp"

#include "cli/exit_codes.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace outbox::cli {

const char* const bench_description =
    "Measure the pipeline against ceilings measured in the same run (own "
    "scratch database next to --db, or on its PostgreSQL server; own "
    "Redis keys)";

std::string bench_program_path() {
  // The binary itself, not argv[0]: a PATH lookup or a relative name says
  // nothing of where outbox-bench was installed with it.
  std::error_code unreadable;
  auto self = std::filesystem::read_symlink("/proc/self/exe", unreadable);
  // Without /proc (a bare chroot) there is no folder to look in; a bare
  // name would run whatever outbox-bench the working directory holds.
  if (unreadable || !self.is_absolute())
    return {};
  return (self.parent_path() / "outbox-bench").string();
}

void add_bench_listing(CLI::App& app) {
  app.add_subcommand("bench", bench_description);
}

int forward_to_bench(const std::vector<std::string>& args) {
  auto program = bench_program_path();
  if (program.empty()) {
    std::cerr << "outbox bench: cannot find outbox-bench: /proc/self/exe "
                 "does not say where outbox is installed (the benchmark is "
                 "the program outbox-bench, installed next to outbox)\n";
    return exit_no_bench_program;
  }
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const auto& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(program.c_str(), argv.data());
  auto error = errno;
  std::cerr << "outbox bench: cannot run " << text::escaped(program) << ": "
            << std::strerror(error)
            << " (the benchmark is the program outbox-bench, installed "
               "next to outbox: build the target outbox-bench, or "
               "cmake --install puts both in PREFIX/bin)\n";
  return exit_no_bench_program;
}

} // namespace outbox::cli
