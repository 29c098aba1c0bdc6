// `outbox lab`: seed 000's eight-step lab, run by the lab coordinator on the
// real writer, relay and consumer actors.

#include "actors/messages.hpp"
#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "cli/command_flags.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/startup_verdict.hpp"
#include "lab/coordinator.hpp"
#include "lab/plan.hpp"
#include "pipeline/spawn_pipeline.hpp"
#include "startup/redis_preflight.hpp"
#include "storage/database.hpp"
#include "storage/private_files.hpp"
#include "storage/types.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <system_error>

namespace outbox::cli {

namespace {

namespace fs = std::filesystem;

/// Flags of `outbox lab`. --db is not shown: the lab's database is always
/// <dir>/app.db, and a --db given is refused naming that.
struct lab_options {
  common_options common;
  std::string dir;
  std::string step;
  bool allow_evicting_redis = false;
};

/// Why the lab cannot start; empty when it can.
using problem = std::optional<std::string>;

/// Why the lab refuses to write in a folder; `code` is its exit code.
struct refusal {
  std::string why;
  int code = exit_failure;
};

/// The lab folder exists (created 0700 for init and the full run), is safe
/// to write in on a shared host, and we can write in it.
std::optional<refusal> prepare_folder(const fs::path& dir, bool may_create) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (!may_create)
      return refusal{"no lab at " + dir.string() + " (run `outbox lab --dir " +
                     dir.string() + " --step init` first)"};
    try {
      storage::create_private_folders(dir);
    } catch (const std::system_error& e) {
      return refusal{"cannot create --dir " + dir.string() + ": " +
                     e.code().message()};
    }
  }
  if (!fs::is_directory(dir, ec))
    return refusal{"--dir " + dir.string() + " is not a folder"};
  // Another user could swap the lab's outputs or app.db for links to files
  // of ours, or read them: a usage error, nothing is written.
  if (auto why = storage::unsafe_folder(dir))
    return refusal{"refusing --dir " + dir.string() + ": " + *why, exit_usage};
  // Checked by writing, not by permission bits (root ignores them).
  auto probe = (dir / ".outbox-lab-probe-XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0)
    return refusal{"cannot write in --dir " + dir.string() + ": " +
                   std::strerror(errno)};
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

/// A step other than init needs the lab's app.db, initialised.
problem require_initialised(const lab::lab_files& files,
                            const config::settings& s) {
  auto init_hint =
      " (run `outbox lab --dir " + files.dir.string() + " --step init` first)";
  if (!fs::exists(files.app_db()))
    return "no lab database at " + files.app_db().string() + init_hint;
  try {
    storage::connect(s.db, storage::open_mode::existing);
  } catch (const std::exception& e) {
    return std::string{e.what()} + init_hint;
  }
  return std::nullopt;
}

problem require_redis(const config::settings& s) {
  try {
    broker::connection{s.redis}.ensure_connected();
  } catch (const broker::broker_error& e) {
    return std::string{e.what()} +
           " (start redis-server, or pass --redis HOST:PORT)";
  }
  return std::nullopt;
}

int fail(const std::string& why, int code) {
  std::cerr << "outbox lab: " << text::escaped(why) << '\n';
  return code;
}

/// Why --db is refused: the lab's database is its own SQLite file.
std::string db_refused(const std::string& db, const lab::lab_files& files) {
  storage::db_options given;
  given.path = db;
  std::string why = "--db is refused: the lab runs on its own SQLite file, " +
                    files.app_db().string() + ", as seed 000 does";
  if (given.postgres())
    why += "; PostgreSQL (" + given.display_name() +
           ") is for init, run and the other commands";
  return why;
}

/// Runs the plan on a lab coordinator; returns its failure (empty: none).
std::string run_plan(lab::lab_setup setup) {
  caf::actor_system_config cfg;
  pipeline::configure_system(cfg);
  caf::actor_system system{cfg};
  auto coordinator =
      system.spawn<caf::detached>(lab::lab_coordinator, std::move(setup));
  std::string failure = "the lab coordinator did not answer";
  caf::scoped_actor self{system};
  self->request(coordinator, caf::infinite, actors::run_atom_v)
      .receive([&](const std::string& outcome) { failure = outcome; },
               [&](caf::error& err) { failure = system.render(err); });
  return failure;
}

int run_lab(const lab_options& o) {
  apply_log_level(o.common.log_level);
  std::optional<lab::lab_step> step;
  if (!o.step.empty()) {
    step = lab::parse_lab_step(o.step);
    if (!step)
      return fail("unknown step '" + o.step +
                      "' (steps: " + lab::lab_step_names() + ")",
                  exit_usage);
  }
  lab::lab_files files{fs::path{o.dir}};
  if (!o.common.db_path.empty())
    return fail(db_refused(o.common.db_path, files), exit_usage);
  if (o.common.key_prefix)
    return fail("--key-prefix is refused: the lab keeps seed 000's plain key "
                "names (outbox.events, processed, ...) in a Redis of its own",
                exit_usage);
  auto configured = resolve_settings(o.common);
  if (configured.db.postgres())
    // A config shared with the pipeline: not wrong, but say which
    // database the lab uses.
    std::cerr << "outbox lab: db.path names "
              << text::escaped(configured.db.display_name())
              << "; the lab runs on its own SQLite file, "
              << text::escaped(files.app_db().string())
              << ", as seed 000 does\n";
  auto s = lab::lab_settings(std::move(configured), files);
  if (o.allow_evicting_redis)
    s.allow_evicting_redis = true;
  bool full = !step;
  bool init_only = step == lab::lab_step::init;
  if (auto refused = prepare_folder(files.dir, full || init_only))
    return fail(refused->why, refused->code);
  if (!full && !init_only)
    if (auto p = require_initialised(files, s))
      return fail(*p, exit_failure);
  // init on a folder without app.db starts a new lab: it resets the lab's
  // Redis keys, so it needs Redis too.
  if (!init_only || !fs::exists(files.app_db())) {
    if (auto p = require_redis(s))
      return fail(*p, exit_failure);
    // The lab checks Redis's settings like `outbox run`, but not the
    // partition count: it always uses its single list outbox.events and
    // leaves the count recorded for the pipeline alone.
    broker::connection conn{s.redis};
    if (auto stop =
            tell_verdict(startup::check_redis_settings(conn, s), "outbox lab"))
      return *stop;
    if (auto stop = check_lab_keyspace(s, "outbox lab"))
      return *stop;
  }

  lab::lab_setup setup;
  setup.settings = s;
  setup.files = files;
  setup.plan = full ? lab::full_lab_plan() : std::vector<lab::lab_step>{*step};
  setup.reset_first = full;
  setup.name_prefix = process_name();
  setup.say = [](const std::string& line) {
    std::cout << text::escaped(line) << std::endl;
  };
  // Real threads for the blocking children, real time for every step.
  setup.detached = true;
  setup.clock = storage::wall_clock_now;
  auto failure = run_plan(std::move(setup));
  if (!failure.empty())
    return fail(failure, exit_failure);
  if (full)
    std::cout << "\nLab complete: see " << text::escaped(files.dir.string())
              << " (app.db, dualwrite.out, order_check.out, atleastonce.out, "
                 "report.txt)\n";
  return exit_ok;
}

void add_flags(CLI::App& command, lab_options& o) {
  command
      .add_option("--dir", o.dir,
                  "the lab's folder (app.db, *.out, report.txt)")
      ->required();
  command.add_option("--step", o.step,
                     "run one step on the existing state (default: "
                     "every step, from a clean state): " +
                         lab::lab_step_names());
  add_allow_evicting_flag(command, o.allow_evicting_redis);
}

} // namespace

void add_lab_command(CLI::App& app, command_action& action) {
  auto& command = add_command<lab_options>(
      app, action,
      {"lab",
       "Seed 000's lab: dual write, outbox, relay, ordering, relay crash, "
       "dedup, report; all steps from a clean state, or one",
       run_lab, add_flags});
  // The lab's database is always <dir>/app.db: --db is hidden from the
  // help, and refused naming that when given.
  command.get_option("--db")->group("");
  command.get_option("--key-prefix")->group("");
}

} // namespace outbox::cli
