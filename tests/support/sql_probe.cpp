#include "support/sql_probe.hpp"

#include <SQLiteCpp/Database.h>
#include <libpq-fe.h>

#include <set>
#include <stdexcept>

namespace outbox::test {

namespace {

bool is_time_column(const std::string& column) {
  static const std::set<std::string> times{"created_at", "available_at",
                                           "lease_until", "published_at",
                                           "claimed_at"};
  return times.count(column) > 0;
}

class sqlite_probe final : public sql_probe {
public:
  explicit sqlite_probe(const std::string& path)
      : db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000) {}

  std::int64_t scalar(const std::string& sql) override {
    return db_.execAndGet(sql).getInt64();
  }
  std::string text(const std::string& sql) override {
    return db_.execAndGet(sql).getString();
  }
  void exec(const std::string& sql) override { db_.exec(sql); }
  std::string ms(const std::string& column) const override { return column; }
  std::string time_of(const std::string& ms_sql) const override {
    return "(" + ms_sql + ")";
  }
  void keep_heads() override {}
  bool has_table(const std::string& name) override {
    return db_.tableExists(name);
  }
  std::string rowid() const override { return "rowid"; }
  std::string event_id(const std::string& name_sql) const override {
    return name_sql;
  }

private:
  SQLite::Database db_;
};

class postgres_probe final : public sql_probe {
public:
  explicit postgres_probe(const std::string& uri)
      : conn_(PQconnectdb(uri.c_str()), &PQfinish) {
    if (PQstatus(conn_.get()) != CONNECTION_OK)
      throw std::runtime_error("probe: " +
                               std::string{PQerrorMessage(conn_.get())});
    // Rows written by hand name their seq, which the outbox's insert
    // trigger refuses from writers: the probe writes as a restore does,
    // with that trigger off (the tests' role is a superuser), and
    // keep_heads() brings aggregate_heads along.
    run("SET session_replication_role = replica");
  }

  std::int64_t scalar(const std::string& sql) override {
    return std::stoll(first(sql, "0"));
  }
  std::string text(const std::string& sql) override { return first(sql, ""); }
  void exec(const std::string& sql) override { run(sql); }
  std::string ms(const std::string& column) const override {
    return "outbox_ms(" + column + ")";
  }
  std::string time_of(const std::string& ms_sql) const override {
    return "outbox_ts(" + ms_sql + ")";
  }
  bool has_table(const std::string& name) override {
    return text("SELECT to_regclass('" + name + "') IS NOT NULL") == "t";
  }
  void keep_heads() override {
    run("INSERT INTO aggregate_heads (aggregate_id, last_seq)"
        " SELECT aggregate_id, max(seq) FROM outbox GROUP BY aggregate_id"
        " ON CONFLICT (aggregate_id) DO UPDATE SET last_seq ="
        " GREATEST(aggregate_heads.last_seq, EXCLUDED.last_seq)");
  }
  std::string rowid() const override { return "id"; }
  std::string event_id(const std::string& name_sql) const override {
    return "rpad(encode(convert_to(" + name_sql +
           ", 'UTF8'), 'hex'), 32, '0')::uuid";
  }

private:
  using result = std::unique_ptr<PGresult, decltype(&PQclear)>;

  result run(const std::string& sql) {
    result r{PQexec(conn_.get(), sql.c_str()), &PQclear};
    auto status = PQresultStatus(r.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      throw std::runtime_error(PQresultErrorMessage(r.get()));
    return r;
  }

  std::string first(const std::string& sql, const char* if_null) {
    auto r = run(sql);
    if (PQntuples(r.get()) < 1)
      throw std::runtime_error("probe: no row from " + sql);
    return PQgetisnull(r.get(), 0, 0) ? if_null : PQgetvalue(r.get(), 0, 0);
  }

  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

} // namespace

std::unique_ptr<sql_probe> sql_probe::open(const backend_database& db) {
  return open(db.kind(), db.options());
}

std::unique_ptr<sql_probe> sql_probe::open(backend kind,
                                           const storage::db_options& options) {
  if (kind == backend::postgres)
    return std::make_unique<postgres_probe>(options.path);
  return std::make_unique<sqlite_probe>(options.path);
}

std::string sql_probe::as_text(const std::string& column) const {
  auto value = is_time_column(column) ? ms(column) : column;
  return "COALESCE(CAST(" + value + " AS TEXT), 'NULL')";
}

std::string named_event_id(backend kind, const std::string& name) {
  if (kind == backend::sqlite)
    return name;
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : name) {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  hex.resize(32, '0');
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) +
         "-" + hex.substr(16, 4) + "-" + hex.substr(20);
}

} // namespace outbox::test
