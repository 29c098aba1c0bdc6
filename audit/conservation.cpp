#include "audit/conservation.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace outbox::audit {

namespace {

/// Keeps details short: a count and the first few offenders.
class offenders {
public:
  void add(const std::string& what) {
    if (examples_.size() < 5)
      examples_.push_back(what);
    ++count_;
  }

  std::int64_t count() const { return count_; }

  std::string describe(const std::string& noun) const {
    std::ostringstream out;
    out << count_ << ' ' << noun;
    for (size_t i = 0; i < examples_.size(); ++i)
      out << (i == 0 ? ": " : ", ") << examples_[i];
    if (count_ > static_cast<std::int64_t>(examples_.size()))
      out << ", ...";
    return out.str();
  }

private:
  std::vector<std::string> examples_;
  std::int64_t count_ = 0;
};

check make_check(std::string name, const offenders& bad,
                 const std::string& noun, std::string ok_detail) {
  if (bad.count() == 0)
    return {std::move(name), check::state::passed, std::move(ok_detail)};
  return {std::move(name), check::state::failed, bad.describe(noun)};
}

/// What the inbox recorded for an event it applied (the script's result).
struct applied_record {
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  std::string sku;
  std::int64_t qty = 0;
};

std::optional<applied_record> parse_record(const std::string& result) {
  auto j = nlohmann::json::parse(result, nullptr, false);
  if (!j.is_object() || !j.contains("aggregate_id") || !j.contains("seq") ||
      !j["aggregate_id"].is_string() || !j["seq"].is_number_integer())
    return std::nullopt;
  applied_record r;
  r.aggregate_id = j["aggregate_id"].get<std::string>();
  r.seq = j["seq"].get<std::int64_t>();
  r.event_type = j.value("event_type", "");
  if (j.contains("sku") && j["sku"].is_string())
    r.sku = j["sku"].get<std::string>();
  if (j.contains("qty") && j["qty"].is_number_integer())
    r.qty = j["qty"].get<std::int64_t>();
  return r;
}

std::int64_t counter(const broker::broker_stats& stats, const char* name) {
  auto i = stats.counters.find(name);
  return i == stats.counters.end() ? 0 : i->second;
}

} // namespace

verdict evaluate(const std::vector<storage::ledger_row>& ledger,
                 const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues,
                 const std::vector<storage::ledger_row>& later_rows,
                 const std::map<std::string, std::int64_t>& aggregate_heads) {
  verdict v;
  v.outbox_rows = static_cast<std::int64_t>(ledger.size());
  v.processed = static_cast<std::int64_t>(inbox.processed.size());
  v.queued = queues.queued_total();
  v.in_processing = queues.processing_total();
  v.dead_lettered = queues.dead_letter;
  v.order_violations = counter(queues, "order_violations");

  offenders unprocessed;
  // `outbox trim` forgets only records of rows published before its cutoff:
  // a missing record of such a row is trimmed, not lost (and cannot be
  // told apart from lost any more).
  std::int64_t trimmed = 0;
  for (const auto& row : ledger) {
    if (row.status == "PUBLISHED")
      ++v.published;
    else if (row.status == "FAILED")
      ++v.failed_rows;
    else
      ++v.unpublished;
    if (row.status != "PUBLISHED" || inbox.processed.count(row.event_id) != 0)
      continue;
    if (row.published_at < inbox.trimmed_before)
      ++trimmed;
    else
      unprocessed.add(row.event_id);
  }
  // More excused rows than records ever trimmed: some of them were lost.
  if (trimmed > inbox.trimmed_records) {
    unprocessed.add(std::to_string(trimmed) +
                    " published before the trim cutoff without a record, but "
                    "only " +
                    std::to_string(inbox.trimmed_records) + " were trimmed");
    trimmed = 0;
  }
  auto all_processed =
      std::to_string(v.published) + " published events all processed";
  if (inbox.trimmed_before > 0)
    all_processed = std::to_string(v.published - trimmed) +
                    " published events processed; " + std::to_string(trimmed) +
                    " published before the trim cutoff " +
                    std::to_string(inbox.trimmed_before) +
                    " have no record any more (trimmed)";
  if (v.queued == 0 && v.in_processing == 0)
    v.checks.push_back(make_check("published_processed", unprocessed,
                                  "published events not processed",
                                  all_processed));
  else
    v.checks.push_back({"published_processed", check::state::skipped,
                        "queues not drained (" + std::to_string(v.queued) +
                            " queued, " + std::to_string(v.in_processing) +
                            " in processing)"});

  std::unordered_set<std::string> known;
  // Trimmed records took their effect with them into trimmed_reserved.
  std::map<std::string, std::int64_t> expected_reserved =
      inbox.trimmed_reserved;
  // The lowest seq each aggregate still has a row for.
  std::unordered_map<std::string, std::int64_t> lowest_seq;
  auto account = [&](const storage::ledger_row& row) {
    if (!known.insert(row.event_id).second)
      return;
    auto [lowest, fresh] = lowest_seq.emplace(row.aggregate_id, row.seq);
    if (!fresh && row.seq < lowest->second)
      lowest->second = row.seq;
    if (row.event_type == "OrderPlaced" && inbox.processed.count(row.event_id))
      expected_reserved[row.sku] += row.qty;
  };
  for (const auto& row : ledger)
    account(row);
  for (const auto& row : later_rows)
    account(row);

  // A processed event without a row is purged history, not an orphan, when
  // its aggregate's remaining rows all come after it (`outbox purge` deletes
  // a prefix of each aggregate's seqs, published in seq order), or none
  // remain and the head the purge saved covers it. Its effect still counts
  // in the reservations, taken from what the inbox recorded when it applied
  // it.
  auto purged = [&](const applied_record& r) {
    auto lowest = lowest_seq.find(r.aggregate_id);
    if (lowest != lowest_seq.end())
      return r.seq < lowest->second;
    auto head = aggregate_heads.find(r.aggregate_id);
    return head != aggregate_heads.end() && r.seq <= head->second;
  };
  offenders orphans;
  std::int64_t purged_history = 0;
  for (const auto& [event_id, result] : inbox.processed) {
    if (known.count(event_id) != 0)
      continue;
    auto record = parse_record(result);
    if (!record || !purged(*record)) {
      orphans.add(event_id);
      continue;
    }
    ++purged_history;
    if (record->event_type == "OrderPlaced")
      expected_reserved[record->sku] += record->qty;
  }
  auto all_known =
      std::to_string(v.processed) + " processed events all have an outbox row";
  if (purged_history > 0)
    all_known = std::to_string(v.processed - purged_history) +
                " processed events all have an outbox row; " +
                std::to_string(purged_history) +
                " more are of purged history (before their aggregate's "
                "remaining rows, or within a purged aggregate's head)";
  v.checks.push_back(make_check("no_orphan_effects", orphans,
                                "processed events without an outbox row",
                                all_known));

  if (!inbox.consistent) {
    v.checks.push_back({"reserved_matches", check::state::skipped,
                        "consumers applied events while Redis was read"});
  } else {
    offenders mismatched;
    std::map<std::string, std::int64_t> all_skus = expected_reserved;
    for (const auto& [sku, qty] : inbox.reserved)
      all_skus.emplace(sku, 0);
    for (const auto& [sku, unused] : all_skus) {
      auto want = expected_reserved.count(sku) ? expected_reserved.at(sku) : 0;
      auto have = inbox.reserved.count(sku) ? inbox.reserved.at(sku) : 0;
      if (want != have)
        mismatched.add(sku + " reserved=" + std::to_string(have) +
                       " expected=" + std::to_string(want));
    }
    v.checks.push_back(make_check(
        "reserved_matches", mismatched, "skus with a wrong reservation",
        std::to_string(all_skus.size()) +
            " skus reserved exactly the processed orders' quantities" +
            (inbox.trimmed_records > 0
                 ? " (" + std::to_string(inbox.trimmed_records) +
                       " trimmed records counted from their summary)"
                 : std::string{})));
  }

  if (v.order_violations == 0)
    v.checks.push_back({"order_kept", check::state::passed,
                        "no aggregate's events were applied out of seq order"});
  else
    v.checks.push_back({"order_kept", check::state::failed,
                        std::to_string(v.order_violations) +
                            " events applied before a lower seq of their "
                            "aggregate"});
  return v;
}

bool verdict::ok() const {
  for (const auto& c : checks)
    if (c.result == check::state::failed)
      return false;
  return true;
}

namespace {

const char* to_string(check::state s) {
  switch (s) {
  case check::state::passed:
    return "passed";
  case check::state::failed:
    return "failed";
  case check::state::skipped:
    return "skipped";
  }
  return "?";
}

} // namespace

std::string verdict::to_json() const {
  nlohmann::json out{{"ok", ok()},
                     {"outbox_rows", outbox_rows},
                     {"published", published},
                     {"unpublished", unpublished},
                     {"failed_rows", failed_rows},
                     {"processed", processed},
                     {"queued", queued},
                     {"in_processing", in_processing},
                     {"dead_lettered", dead_lettered},
                     {"order_violations", order_violations},
                     {"checks", nlohmann::json::array()}};
  for (const auto& c : checks)
    out["checks"].push_back({{"name", c.name},
                             {"result", to_string(c.result)},
                             {"detail", c.detail}});
  return out.dump();
}

std::string verdict::to_text() const {
  std::ostringstream out;
  for (const auto& c : checks)
    out << to_string(c.result) << "  " << c.name << ": " << c.detail << '\n';
  out << "outbox rows " << outbox_rows << " (published " << published
      << ", unpublished " << unpublished << ", failed " << failed_rows
      << "), processed " << processed << ", queued " << queued
      << ", in processing " << in_processing << ", dead-lettered "
      << dead_lettered << '\n'
      << (ok() ? "OK" : "VIOLATED") << '\n';
  return out.str();
}

} // namespace outbox::audit
