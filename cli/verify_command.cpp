#include "audit/pipeline_audit.hpp"
#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/database_to_read.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "storage/store_error.hpp"
#include "text/json_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace outbox::cli {

namespace {

struct verify_options {
  common_options common;
  bool json = false;
};

/// What --json prints when a store cannot be read: a script parsing the
/// output gets a verdict either way, with the reason and no checks run.
void print_unchecked(const char* store, const std::string& error) {
  nlohmann::json out{{"ok", false},
                     {"error", {{"store", store}, {"message", error}}},
                     {"checks", nlohmann::json::array()}};
  std::cout << text::json_text(out) << '\n';
}

int audit(const verify_options& options, const config::settings& settings) {
  auto db = open_existing_database_to_read(settings.db);
  if (auto stop = check_keyspace(*db, settings, "outbox verify")) {
    // Refused before any check: --json still answers, stderr says why.
    if (options.json)
      print_unchecked("keyspace",
                      "this Redis keyspace is not this database's to check "
                      "(stderr says whose, and what to do)");
    return *stop;
  }
  broker::connection redis{settings.redis};
  auto result = audit::audit_pipeline(*db, redis, settings.broker);
  if (options.json)
    std::cout << result.to_json() << '\n';
  else
    std::cout << result.to_text();
  return result.ok() ? exit_ok : exit_failure;
}

int verify(const verify_options& options) {
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  if (!options.json)
    return audit(options, settings);
  // The message also goes to stderr (rethrown to main), as without --json.
  try {
    return audit(options, settings);
  } catch (const broker::broker_error& e) {
    print_unchecked("redis", e.what());
    throw;
  } catch (const storage::store_error& e) {
    print_unchecked("database", e.what());
    throw;
  }
}

void add_flags(CLI::App& command, verify_options& options) {
  command.add_flag("--json", options.json, "one JSON object on stdout");
}

} // namespace

void add_verify_command(CLI::App& app, command_action& action) {
  add_command<verify_options>(
      app, action,
      {"verify",
       "Check the conservation invariants between the database and Redis; "
       "exit 1 if any is violated",
       verify, add_flags});
}

} // namespace outbox::cli
