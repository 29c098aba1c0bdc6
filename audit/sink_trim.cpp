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

/// The rows of `page` Redis would absorb a redelivery of without its
/// record: no record in `processed` (Redis's own trim took it, or never
/// wrote it), and the aggregate's applied seq covers the row's seq with no
/// mark in `gaps` (a seq a jump skipped, a dead letter, an overflow). A
/// Redis that lost its state covers nothing: the rows stay.
std::vector<storage::applied_event>
covered(broker::connection& redis, const broker::keys& names,
        const std::vector<sink::inbox_row>& page, sink_trim_totals& totals) {
  std::vector<std::string> ids, aggregates, gap_fields;
  for (const auto& row : page) {
    ids.push_back(row.event_id);
    aggregates.push_back(row.aggregate_id);
    gap_fields.push_back(row.aggregate_id + ":" + std::to_string(row.seq));
    gap_fields.push_back(row.aggregate_id + ":overflow");
  }
  auto recorded = broker::hash_values(redis, names.processed, ids);
  auto applied = broker::hash_values(redis, names.aggregate_seq, aggregates);
  auto gaps = broker::hash_values(redis, names.seq_gaps(), gap_fields);
  std::vector<storage::applied_event> rows;
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
    if (last < page[i].seq || gaps[2 * i] || gaps[2 * i + 1])
      ++totals.kept_uncovered;
    else
      rows.push_back({page[i].event_id, page[i].aggregate_id, page[i].seq});
  }
  return rows;
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
    std::unordered_set<std::string> candidates;
    for (auto& event :
         delivered_for_trim(db, covered(redis, names, page, totals), cutoff,
                            totals.kept_unpublished, totals.kept_other))
      candidates.insert(std::move(event.event_id));
    // The lists are read after the outbox said delivered: a copy a relay
    // pushed before its ack was read is in them by then.
    auto ids = broker::not_queued(redis, names, candidates, totals.kept_queued);
    if (!ids.empty()) {
      totals.trimmed += static_cast<std::int64_t>(sink.forget(ids));
      ++totals.batches;
    }
  }
}

} // namespace outbox::audit
