// The sink's protocol (sink.hpp) over any backend's primitives.

#include "sink/sink_session.hpp"

namespace outbox::sink {

const char* const inbox_schema = R"sql(
CREATE TABLE IF NOT EXISTS outbox_inbox (
  consumer TEXT NOT NULL,
  event_id TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  event_type TEXT NOT NULL,
  applied_at BIGINT NOT NULL,
  PRIMARY KEY (consumer, event_id));
CREATE INDEX IF NOT EXISTS outbox_inbox_applied
  ON outbox_inbox (consumer, applied_at);
)sql";

const char* const page_sql =
    "SELECT event_id, aggregate_id, seq, applied_at FROM outbox_inbox"
    " WHERE consumer = $1 AND applied_at < $2"
    " AND (applied_at, event_id) > ($3, $4)"
    " ORDER BY applied_at, event_id LIMIT $5";

namespace {

class session_sink : public sink {
public:
  session_sink(std::unique_ptr<sink_session> session, std::string consumer,
               sql_effects effects)
      : session_(std::move(session)), consumer_(std::move(consumer)),
        effects_(std::move(effects)) {}

  std::vector<sink_verdict> apply(const std::vector<sink_event>& events,
                                  std::int64_t now_ms) override {
    std::vector<sink_verdict> verdicts;
    verdicts.reserve(events.size());
    try {
      // The common case first: every inbox row in one statement, no
      // savepoints, a round trip per effect statement.
      session_->transaction([&] {
        verdicts.clear();
        auto fresh = session_->insert_rows(consumer_, events, now_ms);
        for (std::size_t i = 0; i < events.size(); ++i)
          verdicts.push_back(
              fresh[i] ? run_effect(events[i])
                       : sink_verdict{sink_verdict::outcome::duplicate, {}});
      });
      return verdicts;
    } catch (const statement_refused&) {
      // An event's statement (or the COMMIT) was refused: the batch again,
      // each event under a savepoint of its own.
    }
    try {
      session_->transaction([&] {
        verdicts.clear();
        for (const auto& event : events)
          verdicts.push_back(apply_one(event, now_ms));
      });
      return verdicts;
    } catch (const statement_refused&) {
      // Refused past every savepoint: at COMMIT (a deferred constraint) or
      // by a statement that ended the whole transaction. One transaction
      // per event finds which event it is; the others apply.
    }
    verdicts.clear();
    for (const auto& event : events) {
      try {
        sink_verdict verdict;
        session_->transaction([&] { verdict = apply_one(event, now_ms); });
        verdicts.push_back(verdict);
      } catch (const statement_refused& e) {
        verdicts.push_back(
            {sink_verdict::outcome::refused,
             effects_.name + ": " + event.event_type + ": " + e.what()});
      }
    }
    return verdicts;
  }

  std::vector<inbox_row> applied_before(std::int64_t before_ms,
                                        const inbox_row* after,
                                        std::size_t limit) override {
    return session_->applied_before(consumer_, before_ms, after, limit);
  }

  std::size_t forget(const std::vector<std::string>& event_ids) override {
    return event_ids.empty() ? 0 : session_->forget(consumer_, event_ids);
  }

private:
  /// Runs the event's statements: applied, or statement_refused.
  sink_verdict run_effect(const sink_event& event) {
    if (const auto* effect = effects_.find(event.event_type))
      for (const auto& statement : effect->statements)
        session_->run_statement(statement, event);
    return {sink_verdict::outcome::applied, {}};
  }

  /// One event under its own savepoint: a refused statement takes back
  /// only this event's row and writes.
  sink_verdict apply_one(const sink_event& event, std::int64_t now_ms) {
    session_->savepoint();
    if (!session_->insert_row(consumer_, event, now_ms)) {
      session_->release_savepoint();
      return {sink_verdict::outcome::duplicate, {}};
    }
    if (const auto* effect = effects_.find(event.event_type)) {
      for (const auto& statement : effect->statements) {
        try {
          session_->run_statement(statement, event);
        } catch (const statement_refused& e) {
          session_->roll_back_to_savepoint();
          if (!session_->prepares(statement))
            throw sink_unavailable(
                effects_.name + ":" + std::to_string(statement.line) + ": " +
                event.event_type + ": no longer prepares: " + e.what());
          session_->release_savepoint();
          return {sink_verdict::outcome::refused,
                  effects_.name + ":" + std::to_string(statement.line) + ": " +
                      event.event_type + ": " + e.what()};
        }
      }
    }
    session_->release_savepoint();
    return {sink_verdict::outcome::applied, {}};
  }

  std::unique_ptr<sink_session> session_;
  std::string consumer_;
  sql_effects effects_;
};

} // namespace

std::unique_ptr<sink> make_sink(std::unique_ptr<sink_session> session,
                                std::string consumer, sql_effects effects) {
  // Every statement prepared once now: one the sink refuses (its syntax,
  // a table it lacks) stops the start, named, instead of dead-lettering
  // every event of its type.
  for (const auto& entry : effects.by_type)
    for (const auto& statement : entry.second.statements) {
      try {
        session->prepare(statement);
      } catch (const statement_refused& e) {
        throw sink_error(effects.name + ":" + std::to_string(statement.line) +
                         ": " + entry.first + ": " + e.what());
      }
    }
  return std::make_unique<session_sink>(std::move(session), std::move(consumer),
                                        std::move(effects));
}

} // namespace outbox::sink
