#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "storage/database.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <iostream>
#include <memory>

namespace outbox::cli {

void add_init_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<common_options>();
  auto* command = app.add_subcommand(
      "init", "Create the database, or migrate it to this version's schema");
  add_common_options(*command, *options);
  command->callback([options, &action] {
    action = [options] {
      apply_log_level(options->log_level);
      auto settings = resolve_settings(*options);
      bool existed = std::filesystem::exists(settings.db.path);
      storage::open_and_migrate(settings.db);
      std::cout << (existed ? "migrated " : "created ")
                << text::escaped(settings.db.path) << " (schema version "
                << storage::schema_version << ")\n";
      return exit_ok;
    };
  });
}

} // namespace outbox::cli
