#include "bench/workspace.hpp"

#include "bench/interrupt_cleanup.hpp"
#include "broker/connection.hpp"
#include "broker/reliable_queue.hpp"
#include "config/settings.hpp"
#include "storage/database.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace outbox::bench {

namespace fs = std::filesystem;

broker::keys bench_keys(broker::keys names) {
  for (auto* key :
       {&names.queue, &names.processed, &names.reserved, &names.aggregate_seq,
        &names.counters, &names.dead_letter, &names.processing_prefix})
    *key = "bench." + *key;
  names.key_prefix = "bench." + names.key_prefix;
  return names;
}

workspace::workspace(const std::string& parent, config::settings base)
    : base_(std::move(base)) {
  // Processes the bench starts (pipeline_process_command) read a
  // config file with the user's names, unprefixed, and put "bench." before
  // every one themselves, their keyspace stamp's too.
  process_base_ = base_;
  process_base_.broker = config::unprefixed_keys(base_);
  process_base_.key_prefix =
      base_.key_prefix_applied ? base_.key_prefix : std::string{};
  process_base_.key_prefix_applied = false;
  base_.broker = bench_keys(base_.broker);
  if (base_.db.postgres())
    scratch_ = std::make_unique<postgres_scratch>(base_.db);
  auto root = parent.empty() ? fs::temp_directory_path() : fs::path{parent};
  auto pattern = (root / "outbox-bench-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr)
    throw std::runtime_error("cannot create a scratch folder under " +
                             root.string());
  folder_ = name.data();
  register_cleanup(this, [this] { undo(); });
}

workspace::~workspace() {
  // The same undo a stop signal would run, never both.
  run_cleanup(this);
}

void workspace::undo() {
  if (scratch_)
    scratch_->drop();
  std::error_code ignored;
  fs::remove_all(folder_, ignored);
  try {
    clear_redis();
  } catch (const std::exception&) {
    // Redis went away: nothing of ours is left to clean there.
  }
}

config::settings workspace::fresh(const std::string& name,
                                  const std::string& synchronous) {
  auto s = base_;
  if (scratch_) {
    s.db.path = scratch_->uri();
    scratch_->reset();
    clear_redis();
    return s;
  }
  s.db.path = (fs::path{folder_} / (name + ".db")).string();
  s.db.synchronous = synchronous;
  for (auto suffix : {"", "-wal", "-shm"})
    fs::remove(s.db.path + suffix);
  storage::connect(s.db, storage::open_mode::migrated);
  clear_redis();
  return s;
}

config::settings workspace::for_processes(const config::settings& s) const {
  auto out = s;
  out.broker = process_base_.broker;
  out.broker.partitions = s.broker.partitions;
  out.key_prefix = process_base_.key_prefix;
  out.key_prefix_applied = false;
  return out;
}

std::string workspace::durability(const config::settings& s) const {
  return postgres() ? "PG" : s.db.synchronous;
}

void workspace::clear_redis() const {
  broker::connection conn{base_.redis};
  const auto& names = base_.broker;
  // UNLINK, not DEL: the keys go at once, their memory is freed in the
  // background. A soak leaves millions of entries behind, and DEL of them
  // outlasted the I/O timeout.
  std::vector<std::string> del{"UNLINK",
                               names.queue,
                               names.processed,
                               names.reserved,
                               names.aggregate_seq,
                               names.counters,
                               names.dead_letter,
                               names.dead_letter_dropped(),
                               names.trimmed_summary(),
                               names.trimmed_reserved(),
                               names.trimmed_aggregates(),
                               names.seq_gaps(),
                               names.consumer_lock(),
                               names.consumer_processes(),
                               names.relay_processes(),
                               names.partitions_record(),
                               "bench." +
                                   config::owner_stamp_key(process_base_)};
  for (std::size_t i = 0; i < std::max<std::size_t>(names.partitions, 1); ++i) {
    del.push_back(names.partition(i));
    del.push_back(names.doorbell_for(names.partition(i)));
  }
  broker::reliable_queue queue{conn};
  for (auto& list : queue.processing_lists(names.processing_prefix))
    del.push_back(list);
  conn.command(del);
}

} // namespace outbox::bench
