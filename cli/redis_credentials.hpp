#pragma once

// Where the Redis is and who we are to it, from the sources a user has:
// --redis, $OUTBOX_REDIS, $OUTBOX_REDIS_PASSWORD and the config's redis
// section (redis.password_file, redis.password). Passwords stay out of `ps`
// and shell history when they come from the environment or a file.

#include "config/settings.hpp"

#include <string>

namespace outbox::cli {

/// The environment variable that may hold the Redis password.
inline constexpr const char* password_variable = "OUTBOX_REDIS_PASSWORD";
/// The environment variable that may name a file holding it: a systemd
/// credential (`LoadCredential=`, `%d/redis-password`), whose path only
/// the unit knows.
inline constexpr const char* password_file_variable =
    "OUTBOX_REDIS_PASSWORD_FILE";

/// Applies, over the config's values in `s`:
/// - the address: `flag` (--redis) when not empty, else $OUTBOX_REDIS when
///   set and not empty; HOST:PORT or redis://[USER:PASSWORD@]HOST[:PORT][/DB],
///   each part it gives replacing redis.host, redis.port, redis.username,
///   redis.db; or redis-sentinel://...#NAME, which replaces
///   redis.sentinels and redis.master_name too;
/// - the sentinels (redis.sentinel): the address's, else the config's
///   redis.sentinels and redis.master_name (none when an address without
///   them was given), with redis.sentinel_username and the password of
///   redis.sentinel_password_file, else redis.sentinel_password;
/// - the password: the address's own, else $OUTBOX_REDIS_PASSWORD, else the
///   file $OUTBOX_REDIS_PASSWORD_FILE names, else the file
///   redis.password_file, else redis.password.
/// Throws config::config_error naming the flag, variable or key (exit 2);
/// its message never holds a password.
void apply_redis_credentials(config::settings& s, const std::string& flag);

/// The password in the file at `path`, one trailing newline dropped.
/// Refuses a file other users may read (mode o+r or o+w), an empty one, and
/// one that cannot be read. Throws config::config_error naming `key`, where
/// the path came from.
std::string read_password_file(const std::string& path,
                               const char* key = "redis.password_file");

} // namespace outbox::cli
