#include "cli/common_options.hpp"

#include "cli/notice.hpp"
#include "cli/redis_credentials.hpp"
#include "storage/clock.hpp"
#include "storage/database.hpp"
#include "storage/db_folder.hpp"
#include "storage/store_error.hpp"
#include "text/json_log_formatter.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

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

} // namespace

void add_common_options(CLI::App& command, common_options& options) {
  command
      .add_option("--config", options.config_path,
                  "JSON config file (default config/outbox.json, when it "
                  "exists in the working directory)")
      ->check(not_empty);
  command
      .add_option("--db", options.db_path,
                  "SQLite file or PostgreSQL URI (db.path)")
      ->check(not_empty);
  command
      .add_option("--redis", options.redis,
                  "Redis as HOST:PORT or redis://[USER:PASSWORD@]HOST[:PORT]"
                  "[/DB], else $OUTBOX_REDIS, else the config (redis.host and "
                  "redis.port)")
      ->check(not_empty);
  command.add_option(
      "--key-prefix", options.key_prefix,
      "put before every Redis key of the pipeline, so that several "
      "databases share one Redis without meeting (default pipeline:, "
      "broker.key_prefix)");
  command
      .add_option("--log-level", options.log_level,
                  "trace, debug, info, warn, error or off (default warn, "
                  "log.level)")
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
  if (options.key_prefix)
    result.key_prefix = *options.key_prefix;
  // --redis, else $OUTBOX_REDIS, else the config file's; the password
  // from the address, the environment or a file (redis_credentials.hpp).
  apply_redis_credentials(result, options.redis);
  config::validate(result);
  config::apply_key_prefix(result);
  apply_logging(result, options.log_level);
  return result;
}

void apply_log_level(const std::string& level) {
  if (level.empty())
    return;
  auto parsed = spdlog::level::from_str(level);
  // from_str answers "off" for anything it does not know.
  if (parsed == spdlog::level::off && level != "off")
    throw config::config_error("--log-level", "expected trace, debug, info, "
                                              "warn, error or off, got '" +
                                                  level + "'");
  spdlog::set_level(parsed);
}

void apply_logging(const config::settings& s, const std::string& flag_level) {
  // Validated by the config (log.level's choices) and the flag.
  apply_log_level(flag_level.empty() ? s.log.level : flag_level);
  bool json = s.log.format == "json";
  use_json_notices(json);
  if (json)
    spdlog::set_formatter(std::make_unique<text::json_log_formatter>());
}

std::unique_ptr<storage::database>
open_existing_database(const storage::db_options& options) {
  storage::require_database_file(options);
  return storage::connect(options, storage::open_mode::existing);
}

std::string process_name() {
  static const std::string name = [] {
    char host[256] = "host";
    ::gethostname(host, sizeof host - 1);
    auto start = static_cast<std::uint64_t>(storage::wall_clock_now());
    std::string stamp;
    for (; start > 0; start /= 36)
      stamp.insert(stamp.begin(),
                   "0123456789abcdefghijklmnopqrstuvwxyz"[start % 36]);
    std::random_device entropy;
    char noise[8];
    std::snprintf(noise, sizeof noise, "%04x", entropy() & 0xffffu);
    return std::string{host} + "-" + std::to_string(::getpid()) + "." + stamp +
           noise;
  }();
  return name;
}

} // namespace outbox::cli
