#pragma once

// The bench's own database on the PostgreSQL server that --db names: made
// at the start, dropped at the end, so a benchmark never reads or writes
// the user's tables (and a user's database may be a production one).

#include "storage/db_options.hpp"

#include <string>

namespace outbox::bench {

class postgres_scratch {
public:
  /// Connects with `user_db` (its server, role and credentials) and
  /// creates an empty database "outbox_bench_<pid>_<random>" there. Throws
  /// std::runtime_error naming the server (never the password) when it
  /// cannot, e.g. a role without CREATEDB.
  explicit postgres_scratch(const storage::db_options& user_db);
  /// Drops the database, ending any session still on it; says on stderr
  /// when it cannot, naming it.
  ~postgres_scratch();
  postgres_scratch(const postgres_scratch&) = delete;
  postgres_scratch& operator=(const postgres_scratch&) = delete;

  /// The URI of the scratch database: the user's, its dbname replaced.
  const std::string& uri() const { return uri_; }
  const std::string& name() const { return name_; }

  /// Drops the database now (once; later calls do nothing). False, after
  /// saying on stderr which database to drop by hand, when it cannot.
  bool drop() noexcept;

  /// Empties the outbox schema's tables (rows, aggregate heads, request
  /// keys, orders), as a fresh database would be, keeping the schema.
  void reset() const;

private:
  storage::db_options user_db_;
  std::string name_;
  std::string uri_;
  bool dropped_ = false;
};

/// `uri` with its database replaced by `dbname` (a parameter after the
/// URI's own, which libpq lets win).
std::string with_database(const std::string& uri, const std::string& dbname);

} // namespace outbox::bench
