#include "audit/delivery_checks.hpp"

#include "audit/offenders.hpp"
#include "broker/waiting_entries.hpp"
#include "text/utc_time.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <array>

namespace outbox::audit {

namespace {

using broker::waiting_place;

constexpr int dead_place = static_cast<int>(waiting_place::dead_lettered);

/// What the published events that have no record came to.
struct accounting {
  std::array<std::int64_t, 4> waiting{}; // by waiting_place
  std::int64_t trimmed = 0;
  offenders lost;
};

accounting account(SQLite::Database& db, const broker::inbox_snapshot& inbox) {
  // Per row without a record: where it waits (NULL: nowhere), whether it
  // was published before the trim cutoff, whether the inbox's state says
  // it was applied, whether its aggregate's gaps overflowed, and whether
  // it is within the count trim removed of its aggregate.
  SQLite::Statement missing{
      db, "SELECT l.event_id, w.place, l.published_at < :before,"
          " EXISTS (SELECT 1 FROM temp.audit_applied a"
          "  WHERE a.aggregate_id = l.aggregate_id AND a.seq >= l.seq)"
          " AND NOT EXISTS (SELECT 1 FROM temp.audit_gaps g"
          "  WHERE g.aggregate_id = l.aggregate_id AND g.seq = l.seq),"
          " EXISTS (SELECT 1 FROM temp.audit_gaps g"
          "  WHERE g.aggregate_id = l.aggregate_id AND g.seq = 0),"
          " ROW_NUMBER() OVER (PARTITION BY l.aggregate_id,"
          "  l.published_at < :before, w.place IS NULL ORDER BY l.ord)"
          "  <= COALESCE(t.n, 0)"
          " FROM temp.audit_ledger l"
          " LEFT JOIN temp.audit_waiting w ON w.event_id = l.event_id"
          " LEFT JOIN temp.audit_trimmed t ON t.aggregate_id = l.aggregate_id"
          " WHERE l.later = 0 AND l.status = 'PUBLISHED'"
          "  AND NOT EXISTS (SELECT 1 FROM temp.audit_processed p"
          "   WHERE p.event_id = l.event_id)"
          " ORDER BY l.ord"};
  missing.bind(":before", static_cast<std::int64_t>(inbox.trimmed_before));
  accounting result;
  while (missing.executeStep()) {
    if (!missing.getColumn(1).isNull()) {
      auto place = missing.getColumn(1).getInt();
      if (place >= 0 && place < static_cast<int>(result.waiting.size()))
        ++result.waiting[static_cast<std::size_t>(place)];
      continue;
    }
    bool early = missing.getColumn(2).getInt() != 0;
    bool applied = missing.getColumn(3).getInt() != 0;
    bool overflowed = missing.getColumn(4).getInt() != 0;
    bool within_count = missing.getColumn(5).getInt() != 0;
    if (early && (overflowed ? within_count : applied))
      ++result.trimmed;
    else
      result.lost.add(missing.getColumn(0).getString());
  }
  return result;
}

std::int64_t at(const accounting& a, waiting_place where) {
  return a.waiting[static_cast<std::size_t>(where)];
}

} // namespace

check published_processed(SQLite::Database& db,
                          const broker::inbox_snapshot& inbox,
                          const broker::broker_stats& queues,
                          std::int64_t published) {
  if (!queues.settled)
    return {"published_processed", check::state::skipped,
            "a consumer's recovery moved entries back to their queues while "
            "they were counted; run it again"};
  auto a = account(db, inbox);
  std::int64_t waiting = 0;
  for (auto n : a.waiting)
    waiting += n;
  auto processed = published - waiting - a.trimmed - a.lost.count();

  std::string where;
  auto say = [&where](std::int64_t n, const std::string& what) {
    if (n > 0)
      where += (where.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  say(at(a, waiting_place::queued), "queued");
  say(at(a, waiting_place::processing), "in processing lists");
  say(at(a, waiting_place::dead_lettered), "dead-lettered (see dead_letters)");
  say(at(a, waiting_place::dropped),
      "dropped from the dead-letter list by decision (outbox dead-letters "
      "drop)");
  if (a.trimmed > 0)
    say(a.trimmed, "published before the trim cutoff " +
                       text::utc_time(inbox.trimmed_before) +
                       " have no record any more (trimmed)");

  std::string ok_detail =
      where.empty()
          ? std::to_string(published) + " published events all processed"
          : std::to_string(processed) + " of " + std::to_string(published) +
                " published events processed; " + where;
  std::string noun =
      "published events lost: not applied, in no queue, processing list "
      "or dead-letter list, and dropped by no decision";
  if (!where.empty())
    noun = "of " + std::to_string(published) + " " + noun + " (" + where + ")";
  return make_check("published_processed", a.lost, noun, ok_detail);
}

check dead_letters(SQLite::Database& db, const broker::broker_stats& queues) {
  SQLite::Statement waiting{
      // From the few dead-lettered ids to their rows (CROSS JOIN keeps
      // that order), not a pass over the whole ledger.
      db, "SELECT l.event_id FROM temp.audit_waiting w"
          " CROSS JOIN temp.audit_ledger l ON l.event_id = w.event_id"
          " WHERE w.place = :dead AND NOT EXISTS (SELECT 1 FROM"
          "  temp.audit_processed p WHERE p.event_id = l.event_id)"
          " ORDER BY l.ord"};
  waiting.bind(":dead", dead_place);
  auto set_aside = offenders_of(waiting, [](SQLite::Statement& row) {
    return row.getColumn(0).getString();
  });
  std::string ok_detail = "no outbox event waits in the dead-letter list";
  if (queues.dead_letter > 0)
    ok_detail += " (it holds " + std::to_string(queues.dead_letter) +
                 " records, none of an outbox event left unapplied: "
                 "outbox dead-letters lists them)";
  if (queues.dead_letter_dropped > 0)
    ok_detail += "; " + std::to_string(queues.dead_letter_dropped) +
                 " dropped by decision";
  return make_check(
      "dead_letters", set_aside,
      "outbox events wait in the dead-letter list, not applied (outbox "
      "dead-letters says why; fix the cause, then outbox dead-letters replay "
      "EVENT_ID..., or give them up with outbox dead-letters drop "
      "EVENT_ID... --reason TEXT)",
      ok_detail);
}

check events_once(SQLite::Database& db) {
  SQLite::Statement twice{
      db, "SELECT aggregate_id, event_type, COUNT(*)"
          " FROM temp.audit_ledger"
          " WHERE event_type IN ('OrderPlaced', 'OrderPaid', 'OrderShipped')"
          " GROUP BY aggregate_id, event_type HAVING COUNT(*) > 1"
          " ORDER BY aggregate_id, event_type"};
  auto doubled = offenders_of(twice, [](SQLite::Statement& row) {
    return row.getColumn(0).getString() + " has " +
           std::to_string(row.getColumn(2).getInt64()) + " " +
           row.getColumn(1).getString();
  });
  return make_check("events_once", doubled,
                    "orders with a lifecycle event written more than once",
                    "no order has two OrderPlaced, OrderPaid or OrderShipped "
                    "events");
}

} // namespace outbox::audit
