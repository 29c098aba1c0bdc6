#pragma once

// A consumer's own database, where effects and their inbox rows are kept
// together (consumer.sink, docs/events.md "Effects in your database"): the
// inbox pattern of seed 002. Per batch, one transaction: for each event an
// inbox row (consumer, event_id), and only when that row is new the event
// type's statements (sink/sql_effects.hpp). A crash before COMMIT leaves the
// entries to be applied again; after it, their rows make the redelivery a
// duplicate. SQLite file or PostgreSQL URI, as db.path.

#include "sink/sql_effects.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::sink {

/// Where the sink is: a PostgreSQL URI (postgresql://, postgres://) or a
/// SQLite file.
struct sink_target {
  std::string location;
  /// How long a statement waits for another connection's lock.
  int busy_timeout_ms = 5000;

  bool postgres() const;
  /// The sink as messages name it: the file, or the URI without password.
  std::string display_name() const;
};

/// A consumer's own database and what runs there (consumer.sink,
/// consumer.effects_sql).
struct consumer_sink {
  sink_target target;
  /// The inbox rows' consumer column: one database may keep several
  /// pipelines' rows.
  std::string consumer;
  sql_effects effects;
};

/// An event as its effect reads it: the queue entry's fields.
struct sink_event {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  nlohmann::json payload = nlohmann::json::object();
  nlohmann::json headers = nlohmann::json::object();
};

/// What became of one event.
struct sink_verdict {
  enum class outcome {
    /// Its inbox row is new: row and effect committed together.
    applied,
    /// Its inbox row was there: nothing ran.
    duplicate,
    /// Its effect failed for the event's own sake (a constraint, a value
    /// of the wrong type...): nothing of it committed; `reason` says why.
    refused,
  };
  outcome result = outcome::applied;
  std::string reason;
};

/// The sink cannot take the batch now (unreachable, restarting, locked,
/// the COMMIT's answer lost): nothing of it committed, or the inbox rows
/// will tell when it is applied again.
class sink_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The sink cannot be used at all (no inbox table: `outbox init --sink`).
class sink_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An inbox row, as `outbox trim` reads them.
struct inbox_row {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::int64_t applied_at = 0;
};

class sink {
public:
  virtual ~sink() = default;

  /// Applies `events` in order in one transaction, each under a savepoint
  /// of its own: one verdict per event. A repeat within the batch is a
  /// duplicate. `now_ms` is each row's applied_at. Throws sink_unavailable.
  virtual std::vector<sink_verdict> apply(const std::vector<sink_event>& events,
                                          std::int64_t now_ms) = 0;

  /// Up to `limit` of this consumer's inbox rows applied before
  /// `before_ms` that come after `after` (nullptr: from the first) in
  /// (applied_at, event_id) order, in that order: a page of a scan that
  /// goes on past the rows it keeps. Throws sink_unavailable.
  virtual std::vector<inbox_row> applied_before(std::int64_t before_ms,
                                                const inbox_row* after,
                                                std::size_t limit) = 0;

  /// Deletes this consumer's inbox rows of `event_ids`; returns how many.
  /// Throws sink_unavailable.
  virtual std::size_t forget(const std::vector<std::string>& event_ids) = 0;
};

/// Opens `target` for the consumer `consumer` with `effects`. Throws
/// sink_error when it has no inbox table, sink_unavailable when it cannot
/// be reached.
std::unique_ptr<sink> open_sink(const sink_target& target,
                                const std::string& consumer,
                                sql_effects effects);

/// Creates the inbox table in `target` if it is not there (`outbox init
/// --sink`); a SQLite file is created. Throws sink_error or
/// sink_unavailable.
void create_sink_schema(const sink_target& target);

/// Runs SQL text (statements, no parameters) in `target`: the user's own
/// tables, as the benchmark makes them. Throws sink_error or
/// sink_unavailable.
void execute(const sink_target& target, const std::string& sql);

} // namespace outbox::sink
