#include "tests/faults/fault_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <csignal>

namespace outbox::test {
namespace {

using FaultZombieRelay = fault_fixture;

/// Rows a relay process holds according to `outbox status --json` (leases by
/// owner; owners are "relay-<host>-<pid>.<start>-<slot>-<restart>").
int leased_by(const nlohmann::json& status, pid_t pid) {
  int rows = 0;
  auto tag = "-" + std::to_string(pid) + ".";
  if (status.is_discarded() || !status.contains("outbox"))
    return 0;
  for (const auto& lease : status.at("outbox").at("leases"))
    if (lease.at("owner").get<std::string>().find(tag) != std::string::npos)
      rows += lease.at("rows").get<int>();
  return rows;
}

/// True when the database takes a write lock within `wait_ms`: a process
/// frozen inside a transaction would hold it for good.
bool writable(const std::string& db_path, int wait_ms) {
  try {
    SQLite::Database db{db_path, SQLite::OPEN_READWRITE};
    db.exec("PRAGMA busy_timeout = " + std::to_string(wait_ms));
    db.exec("BEGIN IMMEDIATE");
    db.exec("ROLLBACK");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

/// Event ids a process holds leases on, read from the database.
std::vector<std::string> held_by(const std::string& db_path, pid_t pid) {
  SQLite::Database db{db_path, SQLite::OPEN_READONLY};
  db.exec("PRAGMA busy_timeout = 5000");
  SQLite::Statement q{db, "SELECT event_id FROM outbox WHERE status = "
                          "'SENDING' AND instr(owner, ?) > 0"};
  q.bind(1, "-" + std::to_string(pid) + ".");
  std::vector<std::string> ids;
  while (q.executeStep())
    ids.push_back(q.getColumn(0).getString());
  return ids;
}

/// How many of `ids` are PUBLISHED.
std::size_t published_among(const std::string& db_path,
                            const std::vector<std::string>& ids) {
  SQLite::Database db{db_path, SQLite::OPEN_READONLY};
  db.exec("PRAGMA busy_timeout = 5000");
  SQLite::Statement q{db, "SELECT status = 'PUBLISHED' FROM outbox "
                          "WHERE event_id = ?"};
  std::size_t published = 0;
  for (const auto& id : ids) {
    q.bind(1, id);
    if (q.executeStep() && q.getColumn(0).getInt() == 1)
      ++published;
    q.reset();
  }
  return published;
}

/// Scenario 4: a relay process frozen (SIGSTOP) while it holds leases, past
/// their ttl. Another relay process takes the rows over and publishes them;
/// then the zombie wakes (SIGCONT) and finishes its cycle: its ack is
/// rejected by the fence (owner + epoch), which it counts, and order holds.
TEST_F(FaultZombieRelay, FrozenRelayIsFencedAfterTakeover) {
  auto consumer = start_run({"--relays", "0", "--consumers", "2"});
  auto load = waves(300);
  auto zombie =
      start_run({"--relays", "1", "--consumers", "0", "--log-level", "info"});

  // Freeze it at random moments until it is caught holding leases outside
  // any transaction (frozen inside one it would lock the database for all).
  std::vector<std::string> held;
  for (int attempt = 0; attempt < 200 && held.empty(); ++attempt) {
    load.pump(random_ms(20, 120));
    zombie->signal(SIGSTOP);
    if (leased_by(status(), zombie->pid()) > 0 && writable(db_path_, 300))
      held = held_by(db_path_, zombie->pid());
    if (held.empty())
      zombie->signal(SIGCONT);
  }
  ASSERT_FALSE(held.empty()) << "never caught the relay holding leases";
  std::cout << "[ fault    ] relay " << zombie->pid() << " frozen holding "
            << held.size() << " leases" << std::endl;

  // Another relay process takes the expired leases over and publishes.
  auto successor =
      start_run({"--relays", "1", "--consumers", "0", "--log-level", "info"});
  ASSERT_TRUE(successor->wait_for_stderr("took over", 30'000))
      << "no takeover while the relay was frozen";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (published_among(db_path_, held) < held.size() &&
         std::chrono::steady_clock::now() < deadline)
    load.pump(20);
  ASSERT_EQ(published_among(db_path_, held), held.size())
      << "the successor did not publish the frozen relay's rows";

  // The zombie wakes and finishes its cycle. Frozen between its claim and
  // its push, its own clock tells it the lease ran out and it pushes
  // nothing; frozen later, the fence rejects its ack (or its renewal). On
  // a loaded machine its ack may instead meet the busy database: the rows
  // are the successor's anyway, and the counters below still tell.
  zombie->signal(SIGCONT);
  auto deadline_woken =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string seen;
  while (seen.empty() && std::chrono::steady_clock::now() < deadline_woken) {
    for (const char* line :
         {"lease lost on", "lease ran out", "database trouble"})
      if (zombie->wait_for_stderr(line, 50))
        seen = line;
  }
  EXPECT_FALSE(seen.empty()) << "the woken relay never reported its lost "
                                "leases";
  std::cout << "[ fault    ] woken relay: " << seen << std::endl;
  auto orders = load.finish(180'000);

  auto zombie_report = stop_gracefully(*zombie, "woken relay process");
  EXPECT_GT(zombie_report.value("fenced_acks_rejected", 0) +
                zombie_report.value("expired_leases_dropped", 0),
            0)
      << zombie_report.dump();
  auto successor_report = stop_gracefully(*successor, "successor relay");
  EXPECT_GT(successor_report.value("lease_takeovers", 0), 0)
      << successor_report.dump();
  stop_gracefully(*consumer, "consumer process");
  drain_and_finish("FaultZombieRelay", 1, orders);
}

} // namespace
} // namespace outbox::test
