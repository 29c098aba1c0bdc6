#pragma once

// A consumer's effects in its own database (consumer.effects_sql,
// docs/events.md "Effects in your database"): a SQL file of sections, one per
// event type, each headed by a line `-- effect: <event type>` and holding one
// or more statements separated by `;`. Statements name the event's values as
// parameters, bound by name when the effect runs:
//
//   :event_id  :aggregate_id  :seq  :event_type
//   :payload   (the payload as JSON text)   :payload.<field>[.<field>...]
//   :headers   (the headers as JSON text)   :headers.<name>
//
// A payload field or header the event lacks is NULL. `::` is PostgreSQL's
// cast, never a parameter; nothing inside quotes (E'' strings included),
// comments (nested /* */ too) or $tag$ bodies is one, nor a header line.

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::sink {

/// Why an effects file cannot be used: the message names the file and line.
class sql_effects_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Most bytes a SQL effects file may have (it is read once, at start).
inline constexpr std::size_t max_sql_effects_bytes = 256 * 1024;

/// One statement, its parameters numbered in order of first use.
struct sql_statement {
  /// The text with $1, $2... (PostgreSQL) and ?1, ?2... (SQLite).
  std::string postgres;
  std::string sqlite;
  /// The parameters' names: number n is parameters[n - 1].
  std::vector<std::string> parameters;
  /// The file's line the statement starts on, for messages.
  int line = 0;
};

/// The statements one event type runs, in the file's order.
struct sql_effect {
  std::string event_type;
  int line = 0;
  std::vector<sql_statement> statements;
};

struct sql_effects {
  /// The file, as messages name it.
  std::string name;
  std::map<std::string, sql_effect> by_type;

  /// The event types given an effect, sorted.
  std::vector<std::string> types() const;
  /// The effect of `event_type`; nullptr when the file gives none.
  const sql_effect* find(const std::string& event_type) const;
};

/// Parses `text` (the file `name`). Throws sql_effects_error naming
/// name:line: text before the first section, a section without a
/// statement, a type given twice, an unknown parameter, an unterminated
/// quote or comment.
sql_effects parse_sql_effects(const std::string& text, const std::string& name);

/// Reads and parses the file at `path`. Throws sql_effects_error when it
/// cannot be read, is over max_sql_effects_bytes, is not UTF-8 or does not
/// parse.
sql_effects read_sql_effects(const std::string& path);

} // namespace outbox::sink
