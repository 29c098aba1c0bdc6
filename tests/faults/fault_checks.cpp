#include "tests/faults/fault_checks.hpp"

#include "broker/recovery_lists.hpp"
#include "config/settings.hpp"
#include "storage/db_options.hpp"
#include "support/process.hpp"
#include "support/sentinel_group.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace outbox::test {

namespace {

using string_map = std::map<std::string, std::string>;

string_map hash_of(broker::connection& redis, const std::string& key) {
  auto r = redis.command({"HGETALL", key});
  string_map out;
  if (r->type != REDIS_REPLY_ARRAY)
    return out;
  for (std::size_t i = 0; i + 1 < r->elements; i += 2)
    out[broker::reply_text(*r->element[i])] =
        broker::reply_text(*r->element[i + 1]);
  return out;
}

std::int64_t integer_in(const string_map& hash, const std::string& field) {
  auto i = hash.find(field);
  return i == hash.end() ? 0 : std::strtoll(i->second.c_str(), nullptr, 10);
}

std::int64_t list_length(broker::connection& redis, const std::string& key) {
  auto r = redis.command({"LLEN", key});
  return r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
}

/// "what: N, e.g. a, b, c" for a violation line.
std::string examples(const std::string& what, std::int64_t count,
                     const std::vector<std::string>& some) {
  std::ostringstream out;
  out << what << ": " << count;
  if (!some.empty()) {
    out << ", e.g.";
    for (std::size_t i = 0; i < some.size() && i < 3; ++i)
      out << ' ' << some[i];
  }
  return out.str();
}

/// The database half: rows by status, event ids, max seq per aggregate,
/// ordered quantity per sku.
struct database_view {
  std::set<std::string> event_ids;
  std::map<std::string, std::int64_t> max_seq;
  std::map<std::string, std::int64_t> ordered;
  std::vector<std::string> unpublished_examples;
};

using text_rows = std::vector<std::vector<std::string>>;

/// Every row of `sql` as text, read with the database's own client: the
/// SQLite file, or PostgreSQL when `db` is a URI.
text_rows rows_of(const std::string& db, const std::string& sql) {
  text_rows out;
  storage::db_options options;
  options.path = db;
  if (!options.postgres()) {
    SQLite::Database file{db, SQLite::OPEN_READWRITE};
    file.exec("PRAGMA busy_timeout = 5000");
    SQLite::Statement rows{file, sql};
    while (rows.executeStep()) {
      auto& row = out.emplace_back();
      for (int c = 0; c < rows.getColumnCount(); ++c)
        row.push_back(rows.getColumn(c).getString());
    }
    return out;
  }
  // A bounded connect: an address that does not answer must not hang the
  // check.
  const char* keys[] = {"dbname", "connect_timeout", nullptr};
  const char* values[] = {db.c_str(), "10", nullptr};
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
      PQconnectdbParams(keys, values, 1), &PQfinish};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    throw std::runtime_error("fault checks: cannot connect to " +
                             options.display_name() + ": " +
                             PQerrorMessage(conn.get()));
  std::unique_ptr<PGresult, decltype(&PQclear)> rows{
      PQexec(conn.get(), sql.c_str()), &PQclear};
  if (PQresultStatus(rows.get()) != PGRES_TUPLES_OK)
    throw std::runtime_error("fault checks: " + sql + ": " +
                             PQresultErrorMessage(rows.get()));
  for (int r = 0; r < PQntuples(rows.get()); ++r) {
    auto& row = out.emplace_back();
    for (int c = 0; c < PQnfields(rows.get()); ++c)
      row.emplace_back(PQgetvalue(rows.get(), r, c));
  }
  return out;
}

} // namespace

std::int64_t database_number(const std::string& db, const std::string& sql) {
  auto rows = rows_of(db, sql);
  if (rows.empty() || rows.front().empty())
    throw std::runtime_error("fault checks: no value from " + sql);
  return std::stoll(rows.front().front());
}

namespace {

database_view read_database(const std::string& db, pipeline_figures& f) {
  database_view view;
  f.orders = database_number(db, "SELECT COUNT(*) FROM orders");
  for (const auto& row :
       rows_of(db, "SELECT event_id, aggregate_id, seq, status FROM outbox")) {
    const auto& event_id = row.at(0);
    std::int64_t seq = std::stoll(row.at(2));
    const auto& status = row.at(3);
    ++f.outbox_rows;
    view.event_ids.insert(event_id);
    auto& top = view.max_seq[row.at(1)];
    top = std::max(top, seq);
    if (status == "PUBLISHED") {
      ++f.published;
    } else {
      ++f.unpublished;
      if (status == "FAILED")
        ++f.failed_rows;
      view.unpublished_examples.push_back(event_id + "=" + status);
    }
  }
  for (const auto& row :
       rows_of(db, "SELECT sku, SUM(qty) FROM orders GROUP BY sku"))
    view.ordered[row.at(0)] = std::stoll(row.at(1));
  return view;
}

void check_redis(const pipeline_location& where, const config::settings& s,
                 const database_view& db, pipeline_check& out) {
  auto& f = out.figures;
  auto& broke = out.violations;
  broker::connection_options options;
  options.where = where.redis;
  options.sentinel = where.sentinel;
  options.connect_timeout_ms = 2000;
  options.io_timeout_ms = 10'000;
  broker::connection redis{options};
  const auto& names = s.broker;

  // processed: each event once, nothing unknown.
  auto keys = redis.command({"HKEYS", names.processed});
  std::set<std::string> processed;
  for (std::size_t i = 0; i < keys->elements; ++i)
    processed.insert(broker::reply_text(*keys->element[i]));
  f.processed = static_cast<std::int64_t>(processed.size());
  std::vector<std::string> lost, orphans;
  for (const auto& id : db.event_ids)
    if (processed.count(id) == 0)
      lost.push_back(id);
  for (const auto& id : processed)
    if (db.event_ids.count(id) == 0)
      orphans.push_back(id);
  f.lost = static_cast<std::int64_t>(lost.size());
  f.orphans = static_cast<std::int64_t>(orphans.size());
  if (f.processed != f.outbox_rows)
    broke.push_back("HLEN " + names.processed + " = " +
                    std::to_string(f.processed) +
                    ", outbox rows = " + std::to_string(f.outbox_rows));
  if (!lost.empty())
    broke.push_back(examples("events never processed (lost)", f.lost, lost));
  if (!orphans.empty())
    broke.push_back(examples("processed entries without an outbox row",
                             f.orphans, orphans));

  // The effect: reserved per sku is exactly what was ordered.
  auto reserved = hash_of(redis, names.reserved);
  std::vector<std::string> wrong;
  std::set<std::string> skus;
  for (const auto& [sku, qty] : db.ordered)
    skus.insert(sku);
  for (const auto& [sku, qty] : reserved)
    skus.insert(sku);
  for (const auto& sku : skus) {
    auto ordered = db.ordered.count(sku) ? db.ordered.at(sku) : 0;
    auto got = integer_in(reserved, sku);
    if (ordered != got)
      wrong.push_back(sku + " reserved " + std::to_string(got) + " ordered " +
                      std::to_string(ordered));
  }
  f.reserved_mismatches = static_cast<std::int64_t>(wrong.size());
  if (!wrong.empty())
    broke.push_back(examples(names.reserved + " differs from the orders",
                             f.reserved_mismatches, wrong));

  // Order: no first delivery out of seq, and every aggregate reached its top.
  auto counters = hash_of(redis, names.counters);
  f.consumed = integer_in(counters, "consumed");
  f.duplicates = integer_in(counters, "duplicates");
  f.dead_lettered = integer_in(counters, "dead_lettered");
  f.order_violations = integer_in(counters, "order_violations");
  if (f.order_violations != 0)
    broke.push_back("order_violations counter = " +
                    std::to_string(f.order_violations));
  auto seqs = hash_of(redis, names.aggregate_seq);
  std::vector<std::string> off;
  for (const auto& [aggregate, top] : db.max_seq)
    if (integer_in(seqs, aggregate) != top)
      off.push_back(aggregate + " at " +
                    std::to_string(integer_in(seqs, aggregate)) + " of " +
                    std::to_string(top));
  for (const auto& [aggregate, seq] : seqs)
    if (db.max_seq.count(aggregate) == 0)
      off.push_back(aggregate + " unknown, at " + seq);
  f.seq_mismatches = static_cast<std::int64_t>(off.size());
  if (!off.empty())
    broke.push_back(examples(names.aggregate_seq + " differs from max seq",
                             f.seq_mismatches, off));

  // Nothing left queued or in flight.
  auto partitions = std::max<std::size_t>(names.partitions, 1);
  for (std::size_t i = 0; i < partitions; ++i)
    f.queued += list_length(redis, names.partition(i));
  if (f.queued != 0)
    broke.push_back("entries left in the queues: " + std::to_string(f.queued));
  std::vector<std::string> holding;
  for (const auto& [list, queue] :
       broker::find_recovery_lists(redis, names).lists) {
    auto length = list_length(redis, list);
    if (length > 0) {
      f.in_processing += length;
      holding.push_back(list + "=" + std::to_string(length));
    }
  }
  if (!holding.empty())
    broke.push_back(
        examples("entries left in processing lists", f.in_processing, holding));
}

/// What --redis names for `where`.
std::string redis_address(const pipeline_location& where) {
  return where.sentinel ? sentinel_uri(*where.sentinel)
                        : where.redis.to_string();
}

void check_verify(const pipeline_location& where, pipeline_check& out) {
  std::vector<std::string> args{"verify",      "--json",  "--db",
                                where.db_path, "--redis", redis_address(where)};
  if (!where.config_path.empty())
    args.insert(args.end(), {"--config", where.config_path});
  auto verify = run_outbox(args, where.cwd, 60'000);
  out.verify_output = verify.out;
  if (verify.exit_code != 0)
    out.violations.push_back("outbox verify exited " +
                             std::to_string(verify.exit_code) + ": " +
                             verify.out + verify.err);
  auto v = nlohmann::json::parse(verify.out, nullptr, false);
  if (v.is_discarded() || !v.contains("checks")) {
    out.violations.push_back("outbox verify printed no JSON: " + verify.out);
    return;
  }
  for (const auto& check : v.at("checks"))
    if (check.value("result", "") != "passed")
      out.violations.push_back("outbox verify: " + check.dump());
}

} // namespace

pipeline_check check_pipeline(const pipeline_location& where) {
  pipeline_check out;
  config::settings s;
  if (!where.config_path.empty())
    s = config::load_file(where.config_path);
  // The names the binary used: under broker.key_prefix.
  config::apply_key_prefix(s);
  try {
    auto db = read_database(where.db_path, out.figures);
    if (out.figures.unpublished != 0)
      out.violations.push_back(examples("outbox rows not PUBLISHED",
                                        out.figures.unpublished,
                                        db.unpublished_examples));
    check_redis(where, s, db, out);
  } catch (const std::exception& e) {
    out.violations.push_back(std::string{"cannot read the pipeline: "} +
                             e.what());
  }
  check_verify(where, out);
  return out;
}

pipeline_figures expect_pipeline_intact(const pipeline_location& where) {
  auto check = check_pipeline(where);
  for (const auto& violation : check.violations)
    ADD_FAILURE() << violation;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  record_chaos_run(test != nullptr ? test->test_suite_name() : "?", check, 0,
                   0.0);
  return check.figures;
}

double chaos_scale() {
  const char* text = std::getenv("OUTBOX_CHAOS_SCALE");
  if (text == nullptr || *text == '\0')
    return 1.0;
  char* end = nullptr;
  double scale = std::strtod(text, &end);
  return (end != text && *end == '\0' && scale > 0) ? scale : 1.0;
}

int scaled(int base) {
  return std::max(1, static_cast<int>(base * chaos_scale()));
}

std::uint64_t fault_seed(std::uint64_t fallback) {
  const char* text = std::getenv("OUTBOX_FAULT_SEED");
  if (text == nullptr || *text == '\0')
    return fallback;
  return std::strtoull(text, nullptr, 10);
}

void record_chaos_run(const std::string& scenario, const pipeline_check& check,
                      std::int64_t kills, double seconds) {
  const char* path = std::getenv("OUTBOX_CHAOS_REPORT");
  if (path == nullptr || *path == '\0')
    return;
  const auto& f = check.figures;
  nlohmann::json line{{"scenario", scenario},
                      {"events", f.outbox_rows},
                      {"orders", f.orders},
                      {"kills", kills},
                      {"duplicates", f.duplicates},
                      {"lost", f.lost},
                      {"order_violations", f.order_violations},
                      {"dead_lettered", f.dead_lettered},
                      {"seconds", seconds},
                      {"ok", check.ok()},
                      {"violations", check.violations}};
  std::ofstream{path, std::ios::app} << line.dump() << '\n';
}

} // namespace outbox::test
