#pragma once

#include <string>

namespace outbox::storage {

/// The SQL that creates the roles outbox_writer, outbox_relay and
/// outbox_consumer on PostgreSQL and grants each the least it needs
/// (storage/postgres/grants.sql; docs/deploy.md).
std::string postgres_grants();

} // namespace outbox::storage
