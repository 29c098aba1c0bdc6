#include "audit/dedup_trim.hpp"

#include "audit/trim_rule.hpp"
#include "broker/applied_record.hpp"
#include "broker/hash_scan.hpp"
#include "broker/trim_candidates.hpp"
#include "storage/database.hpp"
#include "storage/ledger.hpp"

#include <string>
#include <utility>
#include <vector>

namespace outbox::audit {

namespace {

/// The old records of one HSCAN page whose event was delivered for good.
std::vector<std::string> delivered_before(const broker::hash_page& page,
                                          std::int64_t cutoff,
                                          storage::database& db,
                                          broker::trim_totals& totals) {
  std::vector<storage::applied_event> old;
  for (const auto& [event_id, text] : page) {
    ++totals.scanned;
    auto record = broker::parse_applied_record(text);
    if (!record || !record->at)
      ++totals.kept_other;
    else if (*record->at >= cutoff)
      ++totals.kept_young;
    else
      old.push_back({event_id, std::move(record->aggregate_id), record->seq});
  }
  std::vector<std::string> delivered;
  for (auto& event :
       delivered_for_trim(db, std::move(old), cutoff, totals.kept_unpublished,
                          totals.kept_other))
    delivered.push_back(std::move(event.event_id));
  return delivered;
}

} // namespace

void trim_delivered(storage::database& db, broker::connection& redis,
                    const broker::keys& names, std::int64_t cutoff,
                    std::size_t batch, broker::trim_totals& totals) {
  broker::trim_candidates gathered{redis, names, cutoff, batch, totals};
  broker::scan_hash(redis, names.processed, batch,
                    [&](const broker::hash_page& page) {
                      gathered.add(delivered_before(page, cutoff, db, totals));
                    });
  gathered.flush();
}

} // namespace outbox::audit
