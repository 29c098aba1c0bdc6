#include "cli/common_options.hpp"

#include "broker/redact.hpp"
#include "storage/database.hpp"
#include "storage/store_error.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace outbox::cli {

namespace {

/// An empty value would otherwise read as "not given" and silently fall
/// back to the config's value (`--db ""` would open var/outbox.db).
const CLI::Validator not_empty{[](std::string& value) {
                                 return value.empty()
                                            ? std::string{"must not be empty"}
                                            : std::string{};
                               },
                               ""};

/// HOST:PORT given by `origin` (the flag or the environment variable).
broker::endpoint parse_redis(const std::string& text, const char* origin) {
  auto where = broker::parse_endpoint(text);
  if (!where)
    throw config::config_error(
        origin, "expected HOST:PORT with a host name or IP address (no user "
                "or password) and a port in 1..65535, got '" +
                    broker::redact_secrets(text) + "'");
  return *where;
}

} // namespace

void add_common_options(CLI::App& command, common_options& options) {
  command
      .add_option("--config", options.config_path,
                  "JSON config file (default: config/outbox.json if present)")
      ->check(not_empty);
  command
      .add_option("--db", options.db_path,
                  "SQLite database file (overrides db.path)")
      ->check(not_empty);
  command
      .add_option("--redis", options.redis,
                  "Redis as HOST:PORT (overrides $OUTBOX_REDIS and "
                  "redis.host/redis.port)")
      ->check(not_empty);
  command
      .add_option("--log-level", options.log_level,
                  "trace, debug, info, warn, error or off (default: warn)")
      ->check(not_empty);
}

config::settings resolve_settings(const common_options& options) {
  config::settings result;
  if (!options.config_path.empty())
    result = config::load_file(options.config_path);
  else if (std::filesystem::exists(config::default_config_path))
    result = config::load_file(config::default_config_path);
  if (!options.db_path.empty())
    result.db.path = options.db_path;
  // --redis, else $OUTBOX_REDIS (what scripts/run sets for its private
  // Redis), else the config file's. An empty variable counts as unset.
  const char* from_env = std::getenv("OUTBOX_REDIS");
  if (!options.redis.empty())
    result.redis.where = parse_redis(options.redis, "--redis");
  else if (from_env && *from_env)
    result.redis.where = parse_redis(from_env, "OUTBOX_REDIS");
  config::validate(result);
  config::apply_key_prefix(result);
  return result;
}

void apply_log_level(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  // from_str answers "off" for anything it does not know.
  if (parsed == spdlog::level::off && level != "off")
    throw config::config_error("--log-level", "expected trace, debug, info, "
                                              "warn, error or off, got '" +
                                                  level + "'");
  spdlog::set_level(parsed);
}

std::unique_ptr<SQLite::Database>
open_existing_database(const storage::db_options& options) {
  if (!std::filesystem::exists(options.path))
    throw storage::store_error(storage::store_errc::io,
                               "no database at " + options.path +
                                   " (run `outbox init` first)");
  auto db = storage::open_database(options);
  storage::require_schema(*db);
  return db;
}

std::string host_and_pid() {
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  return std::string{host} + "-" + std::to_string(::getpid());
}

} // namespace outbox::cli
