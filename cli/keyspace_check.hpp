#pragma once

// The keyspace check (startup/keyspace_check.hpp) for the commands that
// read or write the pipeline's Redis keys: its verdict told after the
// command's name, and the exit code when it stops the command.

#include "config/settings.hpp"
#include "startup/keyspace_check.hpp"
#include "storage/database.hpp"

#include <optional>
#include <string>

namespace outbox::cli {

using startup::keyspace_use;

/// Tells startup::check_keyspace's verdict after `command`; returns exit 2
/// when the stamp names another database or old keys wait unprefixed.
std::optional<int> check_keyspace(storage::database& db,
                                  const config::settings& s,
                                  const std::string& command,
                                  keyspace_use use = keyspace_use::read);

/// The same for a command that needs no database of its own (dead-letters):
/// checked when the database exists, else nothing to compare with.
std::optional<int>
check_keyspace_if_database(const config::settings& s,
                           const std::string& command,
                           keyspace_use use = keyspace_use::read);

/// Tells startup::check_lab_keyspace's verdict after `command` (`outbox
/// lab`); returns exit 2 when the seed's key names are a pipeline's.
std::optional<int> check_lab_keyspace(const config::settings& s,
                                      const std::string& command);

} // namespace outbox::cli
