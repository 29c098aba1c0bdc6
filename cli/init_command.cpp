#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"
#include "sink/sink.hpp"
#include "storage/database.hpp"
#include "storage/db_folder.hpp"
#include "storage/postgres_grants.hpp"
#include "storage/private_files.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

namespace outbox::cli {

namespace {

/// A database an older outbox created (0644 by the umask) is readable by
/// every local user; init, the command that creates and upgrades it, makes
/// it and its -wal and -shm files private, and says so. Other commands
/// leave modes alone.
void make_private(const std::string& db_path) {
  for (const auto* suffix : {"", "-wal", "-shm"}) {
    auto path = db_path + suffix;
    if (auto before = storage::tighten_to_private(path))
      std::cerr << "outbox init: " << text::escaped(path)
                << " was open to other users (mode "
                << storage::octal_mode(*before) << "): now "
                << storage::octal_mode(storage::private_file_mode) << '\n';
  }
}

struct init_options {
  common_options common;
  bool print_grants = false;
  std::string sink;
};

/// `outbox init --sink TARGET`: the inbox table of a consumer's own
/// database (docs/events.md, "Effects in your database"); the outbox
/// database is left alone.
int init_sink(const init_options& options) {
  sink::sink_target target;
  target.location = options.sink;
  target.busy_timeout_ms = resolve_settings(options.common).db.busy_timeout_ms;
  try {
    sink::create_sink_schema(target);
  } catch (const sink::sink_error& e) {
    notice("outbox init", e.what(), "error");
    return exit_failure;
  } catch (const sink::sink_unavailable& e) {
    notice("outbox init", e.what(), "error");
    return exit_failure;
  }
  std::cout << "sink " << text::escaped(target.display_name())
            << " has its inbox table (outbox_inbox)\n";
  return exit_ok;
}

int init(const init_options& options) {
  if (options.print_grants) {
    // Nothing opened: the SQL is for the owner to run, with psql, where
    // and when the deployment says (docs/deploy.md).
    std::cout << storage::postgres_grants();
    return exit_ok;
  }
  apply_log_level(options.common.log_level);
  if (!options.sink.empty())
    return init_sink(options);
  auto settings = resolve_settings(options.common);
  // A PostgreSQL database exists before init (createdb made it).
  bool existed =
      settings.db.postgres() || std::filesystem::exists(settings.db.path);
  storage::prepare_database_folder(settings.db);
  auto db = storage::connect(settings.db, storage::open_mode::as_is);
  // The version before: what this init did is said in those terms. A
  // file SQLite cannot read fails in migrate, with the store's message.
  int before = db->found_schema_version();
  db->migrate();
  if (existed && !settings.db.postgres())
    make_private(settings.db.path);
  auto path = text::escaped(settings.db.display_name());
  auto current = std::to_string(storage::schema_version);
  if (!existed)
    std::cout << "created " << path << " (schema version " << current << ")\n";
  else if (before == 0)
    std::cout << "initialised " << path << " (schema version " << current
              << ")\n";
  else if (before == storage::schema_version)
    std::cout << path << " is already at schema version " << current
              << ": nothing to do\n";
  else
    std::cout << "migrated " << path << " from schema version " << before
              << " to " << current << "\n";
  return exit_ok;
}

} // namespace

void add_init_command(CLI::App& app, command_action& action) {
  add_command<init_options>(
      app, action,
      {"init", "Create the database, or migrate it to this version's schema",
       init, [](CLI::App& command, init_options& o) {
         command.add_flag(
             "--print-grants", o.print_grants,
             "print the SQL that creates the PostgreSQL roles outbox_writer, "
             "outbox_relay and outbox_consumer with the least privileges "
             "each needs, and exit (opens nothing)");
         command.add_option(
             "--sink", o.sink,
             "create the inbox table of a consumer's own database (a SQLite "
             "file, created if missing, or a PostgreSQL URI) instead of the "
             "outbox database: docs/events.md, \"Effects in your database\"");
       }});
}

} // namespace outbox::cli
