#include "storage/postgres_grants.hpp"

#include "storage/postgres/sql_files.hpp"

namespace outbox::storage {

std::string postgres_grants() {
  return postgres::sql_files::grants;
}

} // namespace outbox::storage
