#include "audit/conservation.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
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

std::int64_t counter(const broker::broker_stats& stats, const char* name) {
  auto i = stats.counters.find(name);
  return i == stats.counters.end() ? 0 : i->second;
}

} // namespace

verdict evaluate(const std::vector<storage::ledger_row>& ledger,
                 const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues,
                 const std::vector<storage::ledger_row>& later_rows) {
  verdict v;
  v.outbox_rows = static_cast<std::int64_t>(ledger.size());
  v.processed = static_cast<std::int64_t>(inbox.processed.size());
  v.queued = queues.queued_total();
  v.in_processing = queues.processing_total();
  v.dead_lettered = queues.dead_letter;
  v.order_violations = counter(queues, "order_violations");

  offenders unprocessed;
  for (const auto& row : ledger) {
    if (row.status == "PUBLISHED")
      ++v.published;
    else if (row.status == "FAILED")
      ++v.failed_rows;
    else
      ++v.unpublished;
    if (row.status == "PUBLISHED" && inbox.processed.count(row.event_id) == 0)
      unprocessed.add(row.event_id);
  }
  if (v.queued == 0 && v.in_processing == 0)
    v.checks.push_back(make_check(
        "published_processed", unprocessed, "published events not processed",
        std::to_string(v.published) + " published events all processed"));
  else
    v.checks.push_back({"published_processed", check::state::skipped,
                        "queues not drained (" + std::to_string(v.queued) +
                            " queued, " + std::to_string(v.in_processing) +
                            " in processing)"});

  std::unordered_set<std::string> known;
  std::map<std::string, std::int64_t> expected_reserved;
  auto account = [&](const storage::ledger_row& row) {
    if (!known.insert(row.event_id).second)
      return;
    if (row.event_type == "OrderPlaced" && inbox.processed.count(row.event_id))
      expected_reserved[row.sku] += row.qty;
  };
  for (const auto& row : ledger)
    account(row);
  for (const auto& row : later_rows)
    account(row);

  offenders orphans;
  for (const auto& [event_id, result] : inbox.processed)
    if (known.count(event_id) == 0)
      orphans.add(event_id);
  v.checks.push_back(make_check(
      "no_orphan_effects", orphans, "processed events without an outbox row",
      std::to_string(v.processed) +
          " processed events all have an outbox row"));

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
            " skus reserved exactly the processed orders' quantities"));
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
