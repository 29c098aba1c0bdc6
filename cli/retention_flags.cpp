#include "cli/retention_flags.hpp"

#include "cli/duration.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace outbox::cli {

void add_retention_flags(CLI::App& command, retention_options& options,
                         const std::string& older_than_flag,
                         const std::string& age_help,
                         const std::string& batch_help) {
  options.command = command.get_name();
  options.older_than_flag = older_than_flag;
  command.add_option(older_than_flag, options.older_than, age_help)->required();
  command.add_option("--batch", options.batch, batch_help);
  command.add_flag("--json", options.json, "one JSON object on stdout");
}

std::optional<storage::millis> retention_age(const retention_options& options) {
  apply_log_level(options.common.log_level);
  auto older_than = duration_flag(options.command, options.older_than_flag,
                                  options.older_than);
  if (!older_than)
    return std::nullopt;
  if (options.batch < 1 || options.batch > max_batch) {
    std::cerr << "outbox " << options.command
              << ": --batch must be between 1 and " << max_batch << ", got "
              << options.batch << '\n';
    return std::nullopt;
  }
  return older_than;
}

} // namespace outbox::cli
