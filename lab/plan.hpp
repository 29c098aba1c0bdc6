#pragma once

// The lab of seed 000: its eight steps, the files it writes and the settings
// it runs the real pipeline with. CAF-free, so the CLI and tests use it
// without the actor headers.

#include "config/settings.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace outbox::lab {

/// The eight steps of the lab, in the seed's order.
enum class lab_step {
  init,
  dualwrite,
  place_order,
  relay,
  order_check,
  relay_crash,
  consumer,
  report,
};

/// The step's name as typed after --step ("place_order", ...).
const char* to_string(lab_step step);

/// Parses a step name; nothing for an unknown one.
std::optional<lab_step> parse_lab_step(const std::string& name);

/// Every step name, in order, separated by ", " (for error messages).
std::string lab_step_names();

/// What `outbox lab` without --step runs: every step once, except that
/// place_order runs three times and relay twice, as the seed's checks say
/// ("after 3 runs, 3 rows"; "run twice, the list does not grow").
std::vector<lab_step> full_lab_plan();

/// The files of the lab, all in one folder (--dir), named as in the seed.
struct lab_files {
  std::filesystem::path dir;

  /// The outbox database (orders + outbox): the real schema.
  std::filesystem::path app_db() const { return dir / "app.db"; }
  /// The dual-write demo's own order store, never app.db: its orders must
  /// not show up in app.db's orders table.
  std::filesystem::path dualwrite_db() const { return dir / "dualwrite.db"; }
  std::filesystem::path dualwrite_out() const { return dir / "dualwrite.out"; }
  std::filesystem::path order_check_out() const {
    return dir / "order_check.out";
  }
  std::filesystem::path atleastonce_out() const {
    return dir / "atleastonce.out";
  }
  std::filesystem::path report_txt() const { return dir / "report.txt"; }

  /// Every file a full run resets (databases with their -wal/-shm/-journal
  /// companions, and the outputs).
  std::vector<std::filesystem::path> resettable() const;
};

/// The Redis list the dual-write demo tries to publish to.
inline constexpr const char* dualwrite_list = "dualwrite.events";

/// How long a relay's lease lasts in the lab: short, so relay_crash's
/// takeover is seen within seconds instead of the production ttl.
inline constexpr storage::millis lab_lease_ttl_ms = 1500;

/// The lab's cap on db.busy_timeout_ms and redis.io_timeout_ms, so that
/// both together stay under its lease (lease.ttl_ms must exceed their sum).
inline constexpr int lab_timeout_ms = 500;

/// The settings the lab runs with: `base` (config file, --redis) with the
/// database forced to D/app.db, the seed's key names on a single queue
/// (partitions = 1: the list `outbox.events`, the hash `processed`), the
/// lab's short lease and quick polls. Throws config::config_error.
config::settings lab_settings(config::settings base, const lab_files& files);

} // namespace outbox::lab
