#pragma once

#include "config/settings.hpp"
#include "storage/database.hpp"

#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace outbox::cli {

/// Options every command accepts: where the config, database and Redis are.
struct common_options {
  std::string config_path;
  std::string db_path;
  std::string redis;
  /// --key-prefix; unset: the config's broker.key_prefix ("" is a value:
  /// the plain names).
  std::optional<std::string> key_prefix;
  /// --log-level; "" when not given: the config's log.level then.
  std::string log_level;
};

/// Adds --config, --db, --redis and --log-level to a (sub)command.
void add_common_options(CLI::App& command, common_options& options);

/// The settings in force: defaults, then the config file (--config, else
/// config/outbox.json when it exists), then the flags. Throws
/// config::config_error naming the key or flag.
config::settings resolve_settings(const common_options& options);

/// Applies --log-level to the default logger ("": not given, nothing to
/// do). Throws config_error.
void apply_log_level(const std::string& level);

/// Applies the config's log section (resolve_settings does): log.level
/// unless --log-level was given, and log.format, for the spdlog lines and
/// the notices of notice.hpp alike.
void apply_logging(const config::settings& s, const std::string& flag_level);

/// Opens an existing, initialised database for a command that must not create
/// one (status, verify, retry): a missing file is a store_error(io) telling
/// the user to run `outbox init`.
std::unique_ptr<storage::database>
open_existing_database(const storage::db_options& options);

/// "<host>-<pid>.<start>": the prefix of actor names (lease owners,
/// consumers), so names stay unique across processes sharing one database
/// and Redis. <start> (the start time in ms and 16 random bits, base 36 and
/// hex) tells this process from another with the same host name and pid: a
/// restarted container, or one image on two hosts. A relay's name must be
/// its own: after a claim whose answer was lost, the relay hands back every
/// row leased to its name that it does not know of (release_unknown).
std::string process_name();

} // namespace outbox::cli
