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

std::vector<std::string>
field_list(const std::vector<sink::inbox_row>& rows,
           std::string (*field)(const sink::inbox_row&)) {
  std::vector<std::string> fields;
  fields.reserve(rows.size());
  for (const auto& row : rows)
    fields.push_back(field(row));
  return fields;
}

/// The rows of `page` Redis would absorb a redelivery of without its
/// record: no record in `processed` (Redis's own trim took it, or never
/// wrote it), and the aggregate's applied seq covers the row's seq with no
/// mark in `gaps` (a seq a jump skipped, a dead letter, an overflow). A
/// Redis that lost its state covers nothing: the rows stay.
std::vector<sink::inbox_row> covered(broker::connection& redis,
                                     const broker::keys& names,
                                     const std::vector<sink::inbox_row>& page,
                                     sink_trim_totals& totals) {
  auto recorded = broker::hash_values(
      redis, names.processed,
      field_list(page, [](const sink::inbox_row& r) { return r.event_id; }));
  auto applied =
      broker::hash_values(redis, names.aggregate_seq,
                          field_list(page, [](const sink::inbox_row& r) {
                            return r.aggregate_id;
                          }));
  auto marks = broker::hash_values(
      redis, names.seq_gaps(), field_list(page, [](const sink::inbox_row& r) {
        return r.aggregate_id + ":" + std::to_string(r.seq);
      }));
  auto overflows = broker::hash_values(
      redis, names.seq_gaps(), field_list(page, [](const sink::inbox_row& r) {
        return r.aggregate_id + ":overflow";
      }));
  std::vector<sink::inbox_row> rows;
  for (std::size_t i = 0; i < page.size(); ++i) {
    if (recorded[i]) {
      ++totals.kept_recorded;
      continue;
    }
    std::int64_t last = 0;
    try {
      last = applied[i] ? std::stoll(*applied[i]) : 0;
    } catch (const std::exception&) {
      last = 0;
    }
    if (last < page[i].seq || marks[i] || overflows[i])
      ++totals.kept_uncovered;
    else
      rows.push_back(page[i]);
  }
  return rows;
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
        delivered(db, covered(redis, names, page, totals), cutoff, totals);
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
