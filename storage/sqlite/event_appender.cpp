#include "storage/sqlite/event_appender.hpp"

#include "storage/sqlite/sqlite_support.hpp"
#include "storage/store_error.hpp"
#include "text/event_headers.hpp"

#include <SQLiteCpp/Database.h>

#include <cctype>

namespace outbox::storage::sqlite {

namespace {

std::string lowercase(std::string text) {
  for (auto& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

} // namespace

event_appender::event_appender(SQLite::Database& db)
    : // After the outbox's rows, or the head a purge kept when it deleted
      // them all (aggregate_heads): never back to a seq already used.
      next_seq_(db, "SELECT MAX(COALESCE((SELECT MAX(seq) FROM outbox"
                    " WHERE aggregate_id = ?1), 0), COALESCE((SELECT"
                    " last_seq FROM aggregate_heads WHERE aggregate_id = ?1),"
                    " 0)) + 1"),
      insert_event_(db, "INSERT INTO outbox (event_id, aggregate_id, seq,"
                        " event_type, payload, headers, created_at,"
                        " available_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      find_event_(db, "SELECT aggregate_id, seq, event_type FROM outbox"
                      " WHERE event_id = ?") {}

appended_event event_appender::append(const event_request& request,
                                      millis now) {
  // Lowercase, as PostgreSQL's uuid prints it: a retry spelled otherwise
  // is the same event.
  auto event_id = lowercase(request.event_id);
  if (event_id.empty())
    event_id = event_ids_.next();
  else if (auto found = find_appended(request, event_id))
    return *found;
  appended_event result;
  result.event_id = event_id;
  result.aggregate_id = request.aggregate_id;
  result.seq = allocate_seq(request.aggregate_id);
  insert(event_id, request.aggregate_id, result.seq, request.event_type,
         request.payload, traces_.with_traceparent(request.headers), now);
  return result;
}

event_appender::new_event
event_appender::append_new(const std::string& aggregate_id,
                           const std::string& type, const std::string& payload,
                           const std::string& headers, millis now) {
  new_event made{event_ids_.next(), ""};
  auto traced = traces_.with_traceparent(headers);
  insert(made.event_id, aggregate_id, allocate_seq(aggregate_id), type, payload,
         traced, now);
  made.trace_id = text::trace_id_of(traced).value_or("");
  return made;
}

/// The row an event_id names already (a retry: replayed), or nothing. The
/// same id with another aggregate or type names another event: refused.
/// The payload is not compared: one event_id is one event (as
/// outbox_append_once on PostgreSQL).
std::optional<appended_event>
event_appender::find_appended(const event_request& request,
                              const std::string& event_id) {
  statement_use query{find_event_};
  query->bind(1, event_id);
  if (!query->executeStep())
    return std::nullopt;
  appended_event found{event_id, query->getColumn(0).getString(),
                       query->getColumn(1).getInt64(), true};
  auto type = query->getColumn(2).getString();
  if (found.aggregate_id != request.aggregate_id || type != request.event_type)
    throw store_error(store_errc::invalid_input,
                      "event_id " + event_id + " already names " + type +
                          " of " + found.aggregate_id + " (seq " +
                          std::to_string(found.seq) + "), not " +
                          request.event_type + " of " + request.aggregate_id);
  return found;
}

std::int64_t event_appender::allocate_seq(const std::string& aggregate_id) {
  // Safe because the caller's transaction holds the write lock (or will be
  // refused it: a deferred one that read a stale snapshot gets SQLITE_BUSY
  // at this write, never a duplicate seq) until COMMIT.
  statement_use query{next_seq_};
  query->bind(1, aggregate_id);
  query->executeStep();
  return query->getColumn(0).getInt64();
}

void event_appender::insert(const std::string& event_id,
                            const std::string& aggregate_id, std::int64_t seq,
                            const std::string& type, const std::string& payload,
                            const std::string& headers, millis now) {
  statement_use insert{insert_event_};
  insert->bind(1, event_id);
  insert->bind(2, aggregate_id);
  insert->bind(3, seq);
  insert->bind(4, type);
  insert->bind(5, payload);
  insert->bind(6, headers);
  insert->bind(7, now);
  insert->bind(8, now);
  insert->exec();
}

} // namespace outbox::storage::sqlite
