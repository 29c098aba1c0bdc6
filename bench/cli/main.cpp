#include "bench/cli/bench_commands.hpp"
#include "cli/app.hpp"

#include <sys/stat.h>

#include <vector>

// outbox-bench: the benchmark, `outbox bench`, in a program of its own
// (cli/bench_forward.hpp), and the pipeline processes it starts of itself.
int main(int argc, char** argv) {
  // As outbox's: the scratch databases and the processes' config files
  // (which hold the Redis password) are for this user only.
  ::umask(077);
  // `outbox bench ARGS` runs `outbox-bench bench ARGS`; run directly,
  // `outbox-bench ARGS` means the same.
  std::vector<char*> args(argv, argv + argc);
  if (argc == 1 || (argc > 1 && !outbox::cli::is_bench_command(argv[1]))) {
    static char bench[] = "bench";
    args.insert(args.begin() + 1, bench);
  }
  return outbox::cli::run_commands(static_cast<int>(args.size()), args.data(),
                                   outbox::cli::add_bench_commands);
}
