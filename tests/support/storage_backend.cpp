#include "support/storage_backend.hpp"

namespace outbox::test {

std::string backend_name(const ::testing::TestParamInfo<backend>& info) {
  return info.param == backend::postgres ? "PostgreSQL" : "SQLite";
}

backend_database::backend_database(backend kind) : kind_(kind) {
  if (postgres())
    server_ = std::make_unique<pg_server>();
}

storage::db_options backend_database::options(int busy_timeout_ms) const {
  storage::db_options result;
  result.path = postgres() ? server_->uri() : dir_.file("outbox.db");
  result.busy_timeout_ms = busy_timeout_ms;
  result.caller_clock = true;
  return result;
}

std::unique_ptr<storage::database>
backend_database::connect(storage::open_mode mode) const {
  return storage::connect(options(), mode);
}

void PrintTo(backend kind, std::ostream* out) {
  *out << (kind == backend::postgres ? "PostgreSQL" : "SQLite");
}

} // namespace outbox::test
