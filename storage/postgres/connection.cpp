#include "storage/postgres/connection.hpp"

#include "storage/postgres/arrays.hpp"
#include "storage/postgres/lease_store.hpp"
#include "storage/postgres/ledger_source.hpp"
#include "storage/postgres/order_store.hpp"
#include "storage/postgres/outbox_views.hpp"
#include "storage/postgres/retention_store.hpp"
#include "storage/postgres/sql_files.hpp"
#include "storage/store_error.hpp"

namespace outbox::storage::postgres {

namespace {

/// The version schema_version holds, 0 when the table is missing.
int stored_version(session& s, const char* context) {
  // Two statements: a query naming a missing table fails when parsed.
  // pg_class read as a table, not to_regclass: that answers from the
  // session's catalog cache, which keeps "missing" from an earlier lookup
  // even after another process's migration committed while this one
  // waited for the migration lock (an advisory lock refreshes nothing).
  if (s.exec(context,
             "SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c"
             " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
             " WHERE c.relname = 'schema_version'"
             " AND n.nspname = current_schema())")
          .boolean(0, 0))
    return 0;
  return static_cast<int>(
      s.exec(context, "SELECT max(version) FROM schema_version").int64(0, 0));
}

/// Throws store_error(schema) for a schema newer than this binary's.
void refuse_newer(session& s, int found) {
  if (found > schema_version)
    throw store_error(store_errc::schema, s.where() + " has schema version " +
                                              std::to_string(found) +
                                              ", newer than this binary's " +
                                              std::to_string(schema_version) +
                                              ": upgrade outbox");
}

void require_schema(session& s) {
  int found = stored_version(s, "open");
  if (found == 0)
    throw store_error(store_errc::schema,
                      s.where() + " has no outbox schema: run outbox init");
  refuse_newer(s, found);
}

} // namespace

connection::connection(const db_options& options)
    : session_(std::make_unique<session>(options)) {}

connection::~connection() = default;

std::unique_ptr<storage::order_store> connection::orders() {
  return std::make_unique<order_store>(*session_);
}

std::unique_ptr<storage::lease_store> connection::leases() {
  return std::make_unique<lease_store>(*session_);
}

std::unique_ptr<storage::outbox_views> connection::views() {
  return std::make_unique<outbox_views>(*session_);
}

std::unique_ptr<storage::retention_store> connection::retention() {
  return std::make_unique<retention_store>(*session_);
}

std::vector<publication>
connection::read_publications(const std::vector<applied_event>& events) {
  std::vector<publication> found(events.size());
  // PostgreSQL text holds no NUL byte, so an id or aggregate with one
  // names no row (it stays unknown); sent, it would cut the array short.
  auto has_nul = [](const std::string& text) {
    return text.find('\0') != std::string::npos;
  };
  std::vector<std::size_t> asked;
  std::vector<std::string> ids;
  std::vector<std::string> aggregates;
  std::vector<std::int64_t> seqs;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (has_nul(events[i].event_id) || has_nul(events[i].aggregate_id))
      continue;
    asked.push_back(i);
    ids.push_back(events[i].event_id);
    aggregates.push_back(events[i].aggregate_id);
    seqs.push_back(events[i].seq);
  }
  if (asked.empty())
    return found;
  // One statement for the whole page: one snapshot, as trim's rule needs,
  // and one round trip instead of one per event.
  auto rows = session_->run(
      "read_publications", "read_publications",
      {text_array(ids), text_array(aggregates), integer_array(seqs)});
  if (rows.rows() != static_cast<int>(asked.size()))
    throw store_error(store_errc::internal,
                      "read_publications: " + std::to_string(rows.rows()) +
                          " rows for " + std::to_string(asked.size()) +
                          " events");
  for (int r = 0; r < rows.rows(); ++r) {
    auto ord = rows.int64(r, 0);
    if (ord != r + 1)
      throw store_error(store_errc::internal,
                        "read_publications: rows out of order");
    auto& p = found[asked[static_cast<std::size_t>(r)]];
    auto state = rows.text(r, 1);
    if (state == "present") {
      p.where = publication::state::present;
      p.status = rows.text(r, 2);
      if (!rows.null(r, 3))
        p.published_at = rows.int64(r, 3);
    } else if (state == "purged") {
      p.where = publication::state::purged;
    }
  }
  return found;
}

std::unique_ptr<storage::ledger_source> connection::ledger() {
  return std::make_unique<postgres::ledger_source>(*session_);
}

database_identity connection::identity() {
  auto found = session_->run("identity", "database_identity", {});
  if (found.rows() == 0)
    throw store_error(store_errc::schema,
                      session_->where() + " has no database identity");
  database_identity id;
  id.id = found.text(0, 0);
  id.first_schema = static_cast<int>(found.int64(0, 1));
  id.path = session_->where();
  return id;
}

int connection::found_schema_version() {
  try {
    return stored_version(*session_, "schema version");
  } catch (const store_error&) {
    return 0;
  }
}

void connection::migrate() {
  // Already current (every start but the first): nothing to lock, so the
  // processes of a fleet starting at once do not queue behind each other.
  int current = stored_version(*session_, "migrate");
  refuse_newer(*session_, current);
  if (current == schema_version)
    return;
  // One transaction under one advisory lock: two processes initialising
  // at once run the schema once, and a failure leaves nothing (DDL is
  // transactional here). Waiting for another's migration is not a busy
  // row: it gets a minute, not busy_timeout_ms.
  session_->transaction("migrate", [&] {
    session_->exec("migrate", "SET LOCAL lock_timeout = '60s'");
    session_->exec("migrate",
                   "SELECT pg_advisory_xact_lock(hashtext('outbox.migrate'))");
    int found = stored_version(*session_, "migrate");
    refuse_newer(*session_, found);
    if (found == schema_version)
      return;
    if (found == 0) {
      auto foreign = session_->exec(
          "migrate", "SELECT count(*) FROM unnest(ARRAY['orders', 'outbox',"
                     " 'request_keys', 'aggregate_heads', 'database_identity'])"
                     " AS t(name) WHERE to_regclass(name) IS NOT NULL");
      if (foreign.int64(0, 0) > 0)
        throw store_error(store_errc::schema,
                          session_->where() +
                              " already has tables named like outbox's but no"
                              " outbox schema_version: it was not made by"
                              " outbox; use another database");
      session_->exec("migrate", sql_files::schema);
    }
    // Each later version's file, from the stored one on (5 is the first).
    if (found < 6)
      session_->exec("migrate", sql_files::schema_v6);
    if (found < 7)
      session_->exec("migrate", sql_files::schema_v7);
    if (found < 8)
      session_->exec("migrate", sql_files::schema_v8);
    if (found < 9)
      session_->exec("migrate", sql_files::schema_v9);
    session_->exec("migrate", sql_files::schema_v10);
  });
  session_->forget_statements();
}

std::unique_ptr<storage::database> connect(const db_options& options,
                                           open_mode mode) {
  auto db = std::make_unique<connection>(options);
  switch (mode) {
  case open_mode::as_is:
    break;
  case open_mode::existing:
    require_schema(db->link());
    break;
  case open_mode::migrated:
    db->migrate();
    break;
  case open_mode::read_only:
    require_schema(db->link());
    db->link().make_read_only();
    break;
  }
  return db;
}

} // namespace outbox::storage::postgres
