#include "tests/faults/fault_fixture.hpp"

#include "broker/broker_stats.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"

#include <gmock/gmock.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

namespace outbox::test {

namespace {

/// Short leases and fast polling (fast_config), so takeovers happen
/// within a second; by default many attempts, since every killed relay
/// spends one on the rows it held. The stores' timeouts are short too: the
/// lease (also the consumers' lock) must outlast both.
nlohmann::json fault_config(int max_attempts, int backoff_max_ms,
                            int ttl_ms = 500) {
  return {{"db", {{"busy_timeout_ms", 200}}},
          {"redis", {{"connect_timeout_ms", 500}, {"io_timeout_ms", 250}}},
          {"lease",
           {{"ttl_ms", ttl_ms},
            {"max_attempts", max_attempts},
            {"backoff_base_ms", 10},
            {"backoff_max_ms", backoff_max_ms}}},
          {"run", {{"commit_delay_ms", 2}, {"restart_budget", 1000}}}};
}

std::uint64_t seed_for_test() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string{info->test_suite_name()} + "." + info->name();
  return fault_seed(broker::fnv1a_64(name) % 1'000'000);
}

} // namespace

void fault_fixture::SetUp() {
  write_config(fault_config(200, 200));
  seed_ = seed_for_test();
  random_.seed(seed_);
  std::cout << "[ fault    ] seed " << seed_
            << " (repeat with OUTBOX_FAULT_SEED=" << seed_ << "), scale "
            << chaos_scale() << std::endl;
  auto init = run_outbox({"init", "--db", db_path_, "--config", config_path_},
                         dir_.path().string());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  started_ = std::chrono::steady_clock::now();
}

void fault_fixture::TearDown() {
  redis_.reset();
  sentinels_.reset();
}

void fault_fixture::limit_attempts(int max_attempts, int ttl_ms) {
  write_config(fault_config(max_attempts, 40, ttl_ms));
}

void fault_fixture::patch_config(const nlohmann::json& patch) {
  std::ifstream in{config_path_};
  auto config = nlohmann::json::parse(in);
  config.merge_patch(patch);
  dir_.write("fault.json", config.dump(2));
}

std::int64_t fault_fixture::count(const std::string& query) const {
  return database_number(db_path_, query);
}

std::vector<std::string>
fault_fixture::run_args(const std::vector<std::string>& flags,
                        bool until_drained) const {
  std::vector<std::string> args{"run", "--json"};
  if (until_drained)
    args.push_back("--until-drained");
  args.insert(args.end(), flags.begin(), flags.end());
  auto c = common();
  args.insert(args.end(), c.begin(), c.end());
  return args;
}

std::unique_ptr<child_process>
fault_fixture::start_run(const std::vector<std::string>& flags,
                         bool until_drained) const {
  return std::make_unique<child_process>(
      outbox_argv(run_args(flags, until_drained)), dir_.path().string());
}

process_result fault_fixture::run_orders(int relays, int consumers, int orders,
                                         int timeout_ms) const {
  return run_outbox(
      run_args({"--relays", std::to_string(relays), "--consumers",
                std::to_string(consumers), "--orders", std::to_string(orders),
                "--seed", std::to_string(seed_)},
               true),
      dir_.path().string(), timeout_ms);
}

std::unique_ptr<child_process> fault_fixture::start_writer(int orders,
                                                           int wave) const {
  return start_run({"--relays", "0", "--consumers", "0", "--orders",
                    std::to_string(orders), "--seed",
                    std::to_string(seed_ + static_cast<std::uint64_t>(wave))},
                   true);
}

load_waves fault_fixture::waves(int wave_orders, int max_waves) const {
  return load_waves{wave_orders, max_waves, [this, wave_orders](int wave) {
                      return start_writer(wave_orders, wave);
                    }};
}

process_result fault_fixture::kill_hard(child_process& victim) {
  victim.signal(SIGKILL);
  auto killed = victim.wait(10'000);
  EXPECT_EQ(killed.signal, SIGKILL) << killed.out << killed.err;
  return killed;
}

process_result
fault_fixture::replace_killed_consumer(std::unique_ptr<child_process>& consumer,
                                       load_waves& load, int pause_ms) const {
  auto killed = kill_hard(*consumer);
  load.pump(pause_ms);
  consumer = start_run(consumer_only_flags());
  // "started" comes after the recovery, as the consumers begin to pop
  // ("running;" comes earlier, before the coordinator has done anything).
  EXPECT_TRUE(consumer->wait_for_stderr("started 0 relays", 10'000));
  return killed;
}

std::chrono::milliseconds fault_fixture::fault_window() const {
  return std::chrono::milliseconds(static_cast<int>(8000 * chaos_scale()));
}

load_waves::load_waves(
    int wave_orders, int max_waves,
    std::function<std::unique_ptr<child_process>(int)> start_wave)
    : wave_orders_(wave_orders), max_waves_(max_waves),
      start_wave_(std::move(start_wave)), writer_(start_wave_(0)) {}

void load_waves::account(const process_result& r) {
  ++waves_;
  if (r.exit_code == 1)
    for (const auto& word : tolerated_)
      if (r.err.find(word) != std::string::npos) {
        std::cout << "[ fault    ] writer wave " << waves_
                  << " ended by the outage of " << word << std::endl;
        return;
      }
  EXPECT_EQ(r.exit_code, 0)
      << "writer wave " << waves_ << ": " << r.out << r.err;
  if (r.exit_code == 0)
    orders_ += wave_orders_;
}

void load_waves::pump(int ms) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::milliseconds(ms);
  for (auto now = clock::now(); now < deadline; now = clock::now()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!writing_) {
      // The load is over; the caller's fault schedule goes on.
      std::this_thread::sleep_until(deadline);
      return;
    }
    if (!writer_->exited_within(static_cast<int>(left.count()) + 1))
      return;
    account(writer_->wait(0));
    writing_ = max_waves_ <= 0 || waves_ < max_waves_;
    if (writing_)
      writer_ = start_wave_(waves_);
  }
}

std::int64_t load_waves::finish(int timeout_ms) {
  if (writing_)
    account(writer_->wait(timeout_ms));
  writing_ = false;
  return orders_;
}

nlohmann::json fault_fixture::stop_gracefully(child_process& run,
                                              const std::string& what,
                                              process_result* raw) const {
  // A process just started may not handle SIGTERM yet (the default action
  // would kill it): "running;" comes once the signals are taken.
  EXPECT_TRUE(run.wait_for_stderr("running;", 30'000))
      << what << " never said it was running";
  run.signal(SIGTERM);
  auto r = run.wait(60'000);
  if (raw != nullptr)
    *raw = r;
  EXPECT_EQ(r.exit_code, 0) << what << " after SIGTERM: " << r.out << r.err;
  auto report = nlohmann::json::parse(r.out, nullptr, false);
  if (report.is_discarded() || !report.is_object()) {
    ADD_FAILURE() << what << " printed no report: " << r.out << r.err;
    return nlohmann::json::object();
  }
  EXPECT_TRUE(report.value("ok", false)) << what << ": " << r.out;
  return report;
}

fault_fixture::survivors_stderr fault_fixture::settle_and_stop_survivors(
    load_waves& load, child_process& relays, child_process& consumers,
    const std::string& outage) {
  load.finish(180'000);
  EXPECT_TRUE(wait_until_settled(120'000))
      << "the pipeline did not settle after " << outage << ": "
      << status().dump();
  EXPECT_FALSE(relays.exited_within(0)) << "the relay process died";
  EXPECT_FALSE(consumers.exited_within(0)) << "the consumer process died";
  process_result relay_run, consumer_run;
  stop_gracefully(relays, "relay process", &relay_run);
  stop_gracefully(consumers, "consumer process", &consumer_run);
  EXPECT_THAT(relay_run.err,
              testing::Not(testing::HasSubstr("broker refused")));
  return {relay_run.err, consumer_run.err};
}

void fault_fixture::drain() {
  auto relays = start_run({"--relays", "2", "--consumers", "0"}, true);
  auto consumers = start_run({"--relays", "0", "--consumers", "2"}, true);
  using named = std::pair<child_process*, const char*>;
  for (auto [child, what] : {named{relays.get(), "draining relays"},
                             named{consumers.get(), "draining consumers"}}) {
    auto r = child->wait(120'000);
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r.out << r.err;
    auto report = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(!report.is_discarded() && report.value("ok", false))
        << what << ": " << r.out;
  }
}

nlohmann::json fault_fixture::status() const {
  auto args = common();
  args.insert(args.begin(), {"status", "--json"});
  auto r = run_outbox(args, dir_.path().string(), 30'000);
  return nlohmann::json::parse(r.out, nullptr, false);
}

bool fault_fixture::wait_until_settled(int timeout_ms) const {
  auto settings = config::load_file(config_path_);
  config::apply_key_prefix(settings);
  broker::connection redis{redis_options()};
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      auto rows = count("SELECT COUNT(*) FROM outbox");
      auto open = count("SELECT COUNT(*) FROM outbox "
                        "WHERE status <> 'PUBLISHED'");
      auto stats = broker::read_stats(redis, settings.broker);
      if (open == 0 && stats.queued_total() == 0 &&
          stats.processing_total() == 0 && stats.processed == rows)
        return true;
    } catch (const std::exception&) {
      // Redis restarting or the database busy: look again next round.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

pipeline_check fault_fixture::finish(const std::string& scenario,
                                     std::int64_t kills) {
  auto check = check_pipeline(where());
  for (const auto& violation : check.violations)
    ADD_FAILURE() << scenario << ": " << violation;
  auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
          .count();
  const auto& f = check.figures;
  std::cout << "[ fault    ] " << scenario << ": " << f.orders << " orders, "
            << f.outbox_rows << " events, " << kills << " kills, "
            << f.duplicates << " duplicates absorbed, " << f.lost << " lost, "
            << f.order_violations << " order violations, " << seconds << " s"
            << std::endl;
  record_chaos_run(scenario, check, kills, seconds);
  return check;
}

pipeline_check fault_fixture::drain_and_finish(const std::string& scenario,
                                               std::int64_t kills,
                                               std::int64_t orders) {
  drain();
  auto check = finish(scenario, kills);
  EXPECT_EQ(check.figures.orders, orders) << scenario;
  EXPECT_EQ(check.figures.dead_lettered, 0) << scenario;
  return check;
}

int fault_fixture::random_ms(int low, int high) {
  return std::uniform_int_distribution<int>{low, high}(random_);
}

std::size_t fault_fixture::random_index(std::size_t n) {
  return std::uniform_int_distribution<std::size_t>{0, n - 1}(random_);
}

} // namespace outbox::test
