#pragma once

// Internal to config/: the table of every config key. The loader, the
// validator and to_json all walk this one table, so a key is declared once
// with its section, its JSON name, where it lives in `settings` and its rule.

#include "config/settings.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace outbox::config::detail {

/// Longest accepted duration (7 days): keeps `now + ttl` and the idle poll's
/// doubling far from overflow in storage and the actors.
inline constexpr std::int64_t max_duration_ms = 7LL * 24 * 3600 * 1000;

/// Most relays, and most consumers, one process runs. Each is a thread
/// with its own connections: a relay holds the database (3 descriptors with
/// its WAL files) and Redis, a consumer Redis. 64 of each stay well inside
/// the usual limit of 1024 open files, and past a few relays the database's
/// single writer lock, not their number, bounds the throughput. INT_MAX let
/// `--relays 3000` fail to start and then hang in its shutdown.
inline constexpr std::int64_t max_workers = 64;

inline constexpr std::int64_t int_max = std::numeric_limits<int>::max();
inline constexpr std::int64_t int64_max =
    std::numeric_limits<std::int64_t>::max();

/// The JSON type a key takes. Integers are any C++ integer member (read and
/// written as int64); numbers are doubles and accept JSON integers too;
/// booleans take only true or false (not 0, 1 or "yes"); text lists are
/// arrays of non-empty strings.
enum class kind { integer, number, string, boolean, text_list };

/// One config key and how to reach its member of `settings`.
struct field {
  const char* section;
  const char* key;
  kind type;
  /// Inclusive bounds for integers and numbers (probabilities use 0..1).
  std::int64_t min = 0;
  std::int64_t max = 0;
  /// For strings: the allowed values, upper case (empty: any non-empty).
  std::vector<std::string> choices = {};
  /// A string a user may write credentials into (redis.host): shown
  /// through broker::redact_secrets.
  bool may_hold_secrets = false;
  /// A string that may be "" (redis.username: none given).
  bool may_be_empty = false;
  /// A string that is a secret whole (redis.password): shown as "***".
  bool secret = false;

  std::int64_t (*get_integer)(const settings&) = nullptr;
  void (*set_integer)(settings&, std::int64_t) = nullptr;
  double (*get_number)(const settings&) = nullptr;
  void (*set_number)(settings&, double) = nullptr;
  const std::string& (*get_string)(const settings&) = nullptr;
  void (*set_string)(settings&, std::string) = nullptr;
  bool (*get_boolean)(const settings&) = nullptr;
  void (*set_boolean)(settings&, bool) = nullptr;
  const std::vector<std::string>& (*get_list)(const settings&) = nullptr;
  void (*set_list)(settings&, std::vector<std::string>) = nullptr;

  /// The dotted path: "lease.ttl_ms".
  std::string path() const { return std::string{section} + "." + key; }
};

/// Every key, in the order of config/outbox.json.
const std::vector<field>& fields();

/// The section names, in file order.
const std::vector<std::string>& sections();

/// Single-key rules (range, non-empty, choice). The loader checks a JSON
/// value before storing it and validate() checks the stored value, both
/// through these, so both report the same message. Throw config_error.
void check_integer(const field& f, std::int64_t value);
void check_number(const field& f, double value);
void check_string(const field& f, const std::string& value);
void check_list(const field& f, const std::vector<std::string>& value);

/// Checks the stored value of `f` in `s` with the functions above.
void check_field(const field& f, const settings& s);

/// Renders a number for messages without trailing zeros ("1.5", "70000").
std::string number_text(double value);

} // namespace outbox::config::detail
