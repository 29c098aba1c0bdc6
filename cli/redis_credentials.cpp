#include "cli/redis_credentials.hpp"

#include "broker/redact.hpp"
#include "broker/redis_address.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace outbox::cli {

namespace {

std::optional<broker::redis_address> given_address(const std::string& flag,
                                                   const char*& origin) {
  std::string text = flag;
  origin = "--redis";
  if (text.empty()) {
    // What scripts/run sets for its private Redis. An empty variable counts
    // as unset.
    const char* from_env = std::getenv("OUTBOX_REDIS");
    if (from_env == nullptr || *from_env == '\0')
      return std::nullopt;
    text = from_env;
    origin = "OUTBOX_REDIS";
  }
  try {
    return broker::parse_redis_address(text);
  } catch (const broker::address_error& e) {
    throw config::config_error(origin, std::string{e.what()} + ", got '" +
                                           broker::redact_secrets(text) + "'");
  }
}

std::string octal_mode(mode_t mode) {
  std::ostringstream out;
  out << '0' << std::oct << (mode & 0777);
  return out.str();
}

} // namespace

std::string read_password_file(const std::string& path, const char* key) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw config::config_error(key, "cannot read " + path + ": " +
                                        std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw config::config_error(key, path + " is not a regular file");
  // As ssh does with a private key: a secret other users can read is no
  // secret. Group access is left to the operator (a group that runs outbox).
  if ((info.st_mode & (S_IROTH | S_IWOTH)) != 0)
    throw config::config_error(
        key, path + " is readable or writable by other users (mode " +
                 octal_mode(info.st_mode) + "): chmod o-rw " + path +
                 " (600, or 640 for a group that runs outbox)");
  std::ifstream in{path, std::ios::binary};
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof())
    throw config::config_error(key, "cannot read " + path);
  auto password = text.str();
  // `echo secret > file` ends it with a newline (or CR LF on Windows).
  if (!password.empty() && password.back() == '\n')
    password.pop_back();
  if (!password.empty() && password.back() == '\r')
    password.pop_back();
  if (password.empty())
    throw config::config_error(key, path + " is empty");
  return password;
}

namespace {

/// The sentinels and master name of the config, when it names them.
std::optional<broker::sentinel_set>
configured_sentinels(const config::settings& s) {
  if (s.redis_sentinels.empty() && s.redis_master_name.empty())
    return std::nullopt;
  if (s.redis_master_name.empty())
    throw config::config_error("redis.master_name",
                               "is needed with redis.sentinels: the name the "
                               "sentinels monitor the master under");
  if (s.redis_sentinels.empty())
    throw config::config_error("redis.sentinels",
                               "is needed with redis.master_name: the "
                               "sentinels to ask, as HOST[:PORT]");
  if (!broker::valid_master_name(s.redis_master_name))
    throw config::config_error("redis.master_name",
                               "must be letters, digits and . - _ only");
  broker::sentinel_set set;
  set.master_name = s.redis_master_name;
  for (const auto& text : s.redis_sentinels) {
    auto where = broker::parse_sentinel_endpoint(text);
    if (!where)
      throw config::config_error(
          "redis.sentinels",
          "expected HOST[:PORT] (a host name or an IP address, a port in "
          "1..65535, 26379 when left out), got '" +
              broker::redact_secrets(text) + "'");
    set.sentinels.push_back(*where);
  }
  return set;
}

} // namespace

void apply_redis_credentials(config::settings& s, const std::string& flag) {
  const char* origin = nullptr;
  auto given = given_address(flag, origin);
  // An address given on the command line or in the environment replaces
  // the config's, whether it names sentinels or a fixed server.
  s.redis.sentinel = given ? given->sentinel : configured_sentinels(s);
  if (s.redis.sentinel) {
    s.redis.sentinel->username = s.redis_sentinel_username;
    s.redis.sentinel->password =
        s.redis_sentinel_password_file.empty()
            ? s.redis_sentinel_password
            : read_password_file(s.redis_sentinel_password_file,
                                 "redis.sentinel_password_file");
  }
  if (given) {
    s.redis.where = given->where;
    if (given->username)
      s.redis.username = *given->username;
    if (given->db)
      s.redis.db = *given->db;
  }
  const char* from_env = std::getenv(password_variable);
  const char* file_from_env = std::getenv(password_file_variable);
  if (given && given->password)
    s.redis.password = *given->password;
  else if (from_env != nullptr && *from_env != '\0')
    s.redis.password = from_env;
  else if (file_from_env != nullptr && *file_from_env != '\0')
    s.redis.password =
        read_password_file(file_from_env, password_file_variable);
  else if (!s.redis_password_file.empty())
    s.redis.password = read_password_file(s.redis_password_file);
}

} // namespace outbox::cli
