#include "audit/conservation.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
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
  if (j.contains("event_type") && j["event_type"].is_string())
    r.event_type = j["event_type"].get<std::string>();
  if (j.contains("sku") && j["sku"].is_string())
    r.sku = j["sku"].get<std::string>();
  if (j.contains("qty") && j["qty"].is_number_integer())
    r.qty = j["qty"].get<std::int64_t>();
  return r;
}

/// No event applied twice: per aggregate, the records in `processed` plus
/// those `outbox trim` removed cannot outnumber its events (seqs run from 1
/// to the highest of its rows, or of its purged head). An event applied
/// again after its record was trimmed has two effects but one record, so
/// reserved_matches alone cannot see it; this count can.
check applied_once(const std::vector<storage::ledger_row>& ledger,
                   const std::vector<storage::ledger_row>& later_rows,
                   const broker::inbox_snapshot& inbox,
                   const std::map<std::string, std::int64_t>& heads) {
  if (!inbox.consistent)
    return {"applied_once", check::state::skipped,
            "consumers applied events while Redis was read"};
  std::unordered_map<std::string, std::int64_t> events(heads.begin(),
                                                       heads.end());
  for (const auto* rows : {&ledger, &later_rows})
    for (const auto& row : *rows) {
      auto& highest = events[row.aggregate_id];
      highest = std::max(highest, row.seq);
    }
  std::unordered_map<std::string, std::int64_t> applied(
      inbox.trimmed_by_aggregate.begin(), inbox.trimmed_by_aggregate.end());
  for (const auto& [event_id, result] : inbox.processed)
    if (auto record = parse_record(result))
      ++applied[record->aggregate_id];
  offenders twice;
  for (const auto& [aggregate, count] : applied) {
    auto known = events.find(aggregate);
    // An aggregate without rows is no_orphan_effects' to report.
    if (known == events.end() || count <= known->second)
      continue;
    auto trimmed = inbox.trimmed_by_aggregate.find(aggregate);
    twice.add(aggregate + " applied " + std::to_string(count) + " for " +
              std::to_string(known->second) + " events (" +
              std::to_string(trimmed == inbox.trimmed_by_aggregate.end()
                                 ? 0
                                 : trimmed->second) +
              " of them trimmed)");
  }
  return make_check("applied_once", twice,
                    "aggregates with more applied events than events",
                    "no aggregate has more applied events than it has events");
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
  // told apart from lost any more). It is excused only as far as trim
  // removed records of its aggregate; trims of an older version, which
  // counted no aggregates, leave a pool for any aggregate.
  auto allowance = inbox.trimmed_by_aggregate;
  std::int64_t unattributed = inbox.trimmed_records;
  for (const auto& [aggregate, n] : allowance)
    unattributed -= n;
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
    auto left = allowance.find(row.aggregate_id);
    if (row.published_at < inbox.trimmed_before && left != allowance.end() &&
        left->second > 0) {
      --left->second;
      ++trimmed;
    } else if (row.published_at < inbox.trimmed_before && unattributed > 0) {
      --unattributed;
      ++trimmed;
    } else {
      unprocessed.add(row.event_id);
    }
  }
  auto all_processed =
      std::to_string(v.published) + " published events all processed";
  if (inbox.trimmed_before > 0)
    all_processed = std::to_string(v.published - trimmed) +
                    " published events processed; " + std::to_string(trimmed) +
                    " published before the trim cutoff " +
                    std::to_string(inbox.trimmed_before) +
                    " have no record any more (trimmed)";
  // Events set aside on purpose are not lost: say where they are.
  std::string noun = "published events not processed";
  if (v.dead_lettered > 0)
    noun += " (" + std::to_string(v.dead_lettered) +
            " entries wait in the dead-letter list: outbox dead-letters)";
  if (v.queued == 0 && v.in_processing == 0)
    v.checks.push_back(
        make_check("published_processed", unprocessed, noun, all_processed));
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

  v.checks.push_back(applied_once(ledger, later_rows, inbox, aggregate_heads));

  if (!inbox.consistent) {
    v.checks.push_back({"reserved_matches", check::state::skipped,
                        "consumers applied events while Redis was read"});
  } else {
    offenders mismatched;
    for (const auto& finding : inbox.malformed)
      mismatched.add(finding);
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
  return text::json_text(out);
}

std::string verdict::to_text() const {
  std::ostringstream out;
  for (const auto& c : checks)
    out << to_string(c.result) << "  " << c.name << ": "
        << text::escaped(c.detail) << '\n';
  out << "outbox rows " << outbox_rows << " (published " << published
      << ", unpublished " << unpublished << ", failed " << failed_rows
      << "), processed " << processed << ", queued " << queued
      << ", in processing " << in_processing << ", dead-lettered "
      << dead_lettered << '\n'
      << (ok() ? "OK" : "VIOLATED") << '\n';
  return out.str();
}

} // namespace outbox::audit
