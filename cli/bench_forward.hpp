#pragma once

// `outbox bench` is a program of its own, outbox-bench, installed next to
// outbox, so that the production binary links none of the benchmark.
// outbox lists the command in its help and hands every `outbox bench ...`
// over to it, arguments unchanged.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace outbox::cli {

/// What `outbox --help` says of the command, and outbox-bench too.
extern const char* const bench_description;

/// The program that runs `outbox bench`: outbox-bench in the folder of the
/// running outbox binary (found through /proc/self/exe); empty when that
/// cannot be read.
std::string bench_program_path();

/// Lists `bench` among outbox's commands. It has no flags here: run_app
/// hands the command to forward_to_bench before parsing.
void add_bench_listing(CLI::App& app);

/// Replaces this process with outbox-bench given `args` (outbox's own,
/// "bench" first). Returns only when that fails, after saying so on
/// stderr: exit_no_bench_program.
int forward_to_bench(const std::vector<std::string>& args);

} // namespace outbox::cli
