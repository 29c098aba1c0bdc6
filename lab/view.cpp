#include "lab/view.hpp"

#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/list_commands.hpp"
#include "broker/recovery_lists.hpp"
#include "broker/reliable_queue.hpp"
#include "lab/app_reads.hpp"
#include "storage/database.hpp"
#include "storage/outbox_counts.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/outbox_views.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <variant>

namespace outbox::lab {

std::string report_text(const lab_counts& c) {
  return "orders=" + std::to_string(c.orders) + "\n" +
         "outbox=" + std::to_string(c.outbox) + "\n" +
         "enqueued=" + std::to_string(c.enqueued) + "\n" +
         "processed_unique=" + std::to_string(c.processed_unique) + "\n";
}

order_verdict check_queue_order(const std::vector<std::string>& entries) {
  order_verdict verdict;
  std::set<std::string> seen_events;
  // aggregate_id -> highest seq among its first occurrences so far.
  std::map<std::string, std::int64_t> last_seq;
  std::size_t position = 0;
  for (const auto& text : entries) {
    ++position;
    auto decoded = broker::decode(text);
    if (auto* bad = std::get_if<broker::malformed_entry>(&decoded)) {
      verdict.problems.push_back("entry " + std::to_string(position) +
                                 " is malformed: " + bad->reason);
      continue;
    }
    const auto& e = std::get<broker::event_entry>(decoded);
    ++verdict.entries;
    if (!seen_events.insert(e.event_id).second)
      continue; // a redelivery: its first occurrence was checked
    auto [at, fresh] = last_seq.emplace(e.aggregate_id, e.seq);
    if (!fresh) {
      if (e.seq < at->second)
        verdict.problems.push_back(
            "aggregate " + e.aggregate_id + ": seq " + std::to_string(e.seq) +
            " (" + e.event_type + ", entry " + std::to_string(position) +
            ") entered the queue after seq " + std::to_string(at->second));
      at->second = std::max(at->second, e.seq);
    }
  }
  verdict.aggregates = last_seq.size();
  return verdict;
}

std::int64_t count_event(const std::vector<std::string>& entries,
                         const std::string& event_id) {
  std::int64_t count = 0;
  for (const auto& text : entries) {
    auto decoded = broker::decode(text);
    if (auto* e = std::get_if<broker::event_entry>(&decoded))
      count += e->event_id == event_id ? 1 : 0;
  }
  return count;
}

lab_view::lab_view(const config::settings& s, lab_files files)
    : settings_(s), files_(std::move(files)), redis_(s.redis) {}

lab_view::~lab_view() = default;

SQLite::Database& lab_view::db() {
  if (!db_) {
    db_ = storage::sqlite::open_database(settings_.db);
    storage::sqlite::require_schema(*db_);
    store_ = std::make_unique<storage::sqlite::outbox_views>(*db_);
  }
  return *db_;
}

std::vector<std::string> lab_view::reset() {
  const auto& k = settings_.broker;
  std::vector<std::string> keys{k.queue,
                                k.processed,
                                k.reserved,
                                k.aggregate_seq,
                                k.counters,
                                k.dead_letter,
                                k.dead_letter_dropped(),
                                dualwrite_list,
                                k.trimmed_summary(),
                                k.trimmed_reserved(),
                                k.trimmed_aggregates(),
                                k.seq_gaps()};
  for (auto& list :
       broker::reliable_queue{redis_}.processing_lists(k.processing_prefix))
    keys.push_back(list);
  auto deleted = broker::delete_keys(redis_, keys);
  std::string key_list;
  for (const auto& key : keys)
    key_list += (key_list.empty() ? "" : " ") + key;
  std::vector<std::string> done{"Redis " + redis_.options().where.to_string() +
                                ": DEL " + key_list + " (" +
                                std::to_string(deleted) + " existed)"};
  // The view's own connection must not keep the old file alive.
  store_.reset();
  db_.reset();
  std::string removed;
  for (const auto& file : files_.resettable()) {
    std::error_code ec;
    if (std::filesystem::remove(file, ec))
      removed += (removed.empty() ? "" : " ") + file.filename().string();
    else if (ec)
      throw std::runtime_error("cannot remove " + file.string() + ": " +
                               ec.message());
  }
  done.push_back(
      "files in " + files_.dir.string() + ": " +
      (removed.empty() ? std::string{"none existed"} : "removed " + removed));
  return done;
}

outbox_progress lab_view::outbox(storage::millis now) {
  db();
  auto stats = store_->stats(now);
  outbox_progress p;
  storage::copy_outbox_counts(stats, p);
  p.expired_leases = stats.expired_leases;
  p.leases = stats.leases;
  return p;
}

queue_progress lab_view::queue() {
  auto stats = broker::read_stats(redis_, settings_.broker);
  queue_progress q;
  q.queued = stats.queued_total();
  q.in_processing = stats.processing_total();
  q.processed = stats.processed;
  q.consumed = stats.counter("consumed");
  q.duplicates = stats.counter("duplicates");
  q.dead_lettered = stats.counter("dead_lettered");
  return q;
}

std::vector<std::string> lab_view::queue_entries() {
  return broker::whole_list(redis_, settings_.broker.queue);
}

std::size_t lab_view::recover_processing() {
  return broker::recover_every_list(redis_, settings_.broker);
}

lab_counts lab_view::counts() {
  auto tables = count_orders_and_outbox(db());
  lab_counts c;
  c.orders = tables.orders;
  c.outbox = tables.outbox;
  auto q = queue();
  c.enqueued = q.enqueued();
  c.processed_unique = q.processed;
  return c;
}

std::vector<aggregate_row>
lab_view::aggregate_rows(const std::string& aggregate_id) {
  return read_aggregate_rows(db(), aggregate_id);
}

} // namespace outbox::lab
