#include "audit/sink_trim.hpp"

#include "audit/trim_rule.hpp"
#include "broker/hash_scan.hpp"
#include "broker/queued_events.hpp"
#include "sink/sink.hpp"
#include "storage/database.hpp"
#include "storage/ledger.hpp"

#include <string>
#include <unordered_set>
#include <vector>

namespace outbox::audit {

namespace {

/// The rows of `page` whose event has no record in `processed`.
std::vector<sink::inbox_row>
unrecorded(broker::connection& redis, const broker::keys& names,
           const std::vector<sink::inbox_row>& page, sink_trim_totals& totals) {
  std::vector<std::string> ids;
  for (const auto& row : page)
    ids.push_back(row.event_id);
  auto recorded = broker::hash_has_fields(redis, names.processed, ids);
  std::vector<sink::inbox_row> gone;
  for (std::size_t i = 0; i < page.size(); ++i) {
    if (recorded[i])
      ++totals.kept_recorded;
    else
      gone.push_back(page[i]);
  }
  return gone;
}

/// Of `rows`, the event_ids delivered for good.
std::unordered_set<std::string>
delivered(storage::database& db, const std::vector<sink::inbox_row>& rows,
          std::int64_t cutoff, sink_trim_totals& totals) {
  std::vector<storage::applied_event> events;
  for (const auto& row : rows)
    events.push_back({row.event_id, row.aggregate_id, row.seq});
  auto publications = db.read_publications(events);
  std::unordered_set<std::string> ids;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    switch (judge_for_trim(publications[i], cutoff)) {
    case trim_verdict::delivered:
      ids.insert(rows[i].event_id);
      break;
    case trim_verdict::unpublished:
      ++totals.kept_unpublished;
      break;
    case trim_verdict::unknown:
      ++totals.kept_other;
      break;
    }
  }
  return ids;
}

} // namespace

void trim_sink_rows(storage::database& db, broker::connection& redis,
                    const broker::keys& names, sink::sink& sink,
                    std::int64_t cutoff, std::size_t batch,
                    sink_trim_totals& totals) {
  sink::inbox_row after;
  bool first = true;
  while (true) {
    auto page = sink.applied_before(cutoff, first ? nullptr : &after, batch);
    if (page.empty())
      return;
    first = false;
    after = page.back();
    totals.scanned += static_cast<std::int64_t>(page.size());
    auto candidates =
        delivered(db, unrecorded(redis, names, page, totals), cutoff, totals);
    // The lists are read after the outbox said delivered: a copy a relay
    // pushed before its ack was read is in them by then.
    auto queued = broker::queued_among(redis, names, candidates);
    std::vector<std::string> ids;
    for (const auto& id : candidates) {
      if (queued.count(id) != 0)
        ++totals.kept_queued;
      else
        ids.push_back(id);
    }
    if (!ids.empty()) {
      totals.trimmed += static_cast<std::int64_t>(sink.forget(ids));
      ++totals.batches;
    }
  }
}

} // namespace outbox::audit
