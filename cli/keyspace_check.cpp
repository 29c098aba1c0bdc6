#include "cli/keyspace_check.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/key_scan.hpp"
#include "broker/keyspace_owner.hpp"
#include "cli/common_options.hpp"
#include "cli/database_to_read.hpp"
#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"
#include "storage/database_identity.hpp"
#include "storage/db_folder.hpp"
#include "storage/store_error.hpp"
#include "text/terminal_text.hpp"

#include <sstream>

namespace outbox::cli {

namespace {

std::string quoted(const std::string& text) {
  return "\"" + text::escaped(text) + "\"";
}

void say_owned_elsewhere(const std::string& command,
                         const broker::keyspace_owner& owner,
                         const storage::database_identity& ours,
                         const config::settings& s) {
  std::ostringstream said;
  said << "this Redis keyspace belongs to another database (id "
       << text::escaped(owner.id) << ", path " << text::escaped(owner.path)
       << "), not to " << text::escaped(ours.path) << " (id " << ours.id
       << "): its keys (broker.key_prefix " << quoted(s.key_prefix)
       << ", stamp " << text::escaped(config::owner_stamp_key(s))
       << ") hold that database's events, so nothing here is compared "
          "with them. Use that database (--db), or give this one a "
          "keyspace of its own (another broker.key_prefix, or another "
          "Redis)";
  notice(command, said.str(), "error");
}

/// An upgraded database whose events may still wait under the names used
/// before broker.key_prefix: the relays' partition record there says a
/// pipeline ran on them (the lab never writes one). Nothing stamped under
/// the prefix yet means this version has not taken over.
std::optional<std::string> legacy_record(broker::connection& conn,
                                         const config::settings& s,
                                         const storage::database_identity& db) {
  if (s.key_prefix.empty() || !db.upgraded())
    return std::nullopt;
  auto record = config::unprefixed_keys(s).partitions_record();
  if (!broker::key_exists(conn, record))
    return std::nullopt;
  return record;
}

void say_legacy(const std::string& command, const std::string& record,
                const config::settings& s) {
  std::ostringstream said;
  said << "this database was upgraded from a version that kept the "
          "pipeline's Redis keys under plain names, and Redis still "
          "holds them ("
       << text::escaped(record)
       << " exists), while this version uses the prefix "
       << quoted(s.key_prefix)
       << " (broker.key_prefix), where nothing is stamped yet. Their "
          "queued events and dedup records would look lost. To keep "
          "using them, set \"key_prefix\": \"\" in the broker section "
          "of the config file. To move to the prefix instead: drain "
          "them with that setting (outbox status shows QUEUED and "
          "PROCESSING at 0), then DEL "
       << text::escaped(record) << " and remove the setting";
  notice(command, said.str(), "error");
}

} // namespace

std::optional<int> check_keyspace(storage::database& db,
                                  const config::settings& s,
                                  const std::string& command,
                                  keyspace_use use) {
  auto ours = db.identity();
  auto key = config::owner_stamp_key(s);
  try {
    broker::connection conn{s.redis};
    auto owner = broker::read_owner(conn, key);
    if (!owner) {
      if (auto record = legacy_record(conn, s, ours)) {
        say_legacy(command, *record, s);
        return exit_usage;
      }
      if (use == keyspace_use::read)
        return std::nullopt;
      owner = broker::stamp_owner(conn, key, {ours.id, ours.path});
    }
    if (owner->id == ours.id)
      return std::nullopt;
    say_owned_elsewhere(command, *owner, ours, s);
    return exit_usage;
  } catch (const broker::broker_error& e) {
    // Down, or a replica that takes no write: the command meets the same
    // Redis next and says so in its own words (status still shows the
    // database half). A stamp refused for a write is written by a later
    // start.
    if (e.code() != broker::broker_errc::unavailable)
      throw;
    return std::nullopt;
  }
}

std::optional<int> check_keyspace_if_database(const config::settings& s,
                                              const std::string& command,
                                              keyspace_use use) {
  if (storage::database_file_missing(s.db))
    return std::nullopt;
  // A command that needs no database (dead-letters) opens it only to learn
  // its identity: read-only for a read, so a user who may only read it, or
  // a database of an older schema, still reaches Redis. Its replay writes
  // the keyspace and must stamp it, so that open is the usual one.
  if (use == keyspace_use::read) {
    std::unique_ptr<storage::database> db;
    try {
      db = open_existing_database_to_read(s.db);
    } catch (const storage::store_error&) {
      return std::nullopt;
    }
    return check_keyspace(*db, s, command, use);
  }
  auto db = open_existing_database(s.db);
  return check_keyspace(*db, s, command, use);
}

std::optional<int> check_lab_keyspace(const config::settings& s,
                                      const std::string& command) {
  config::settings plain = s;
  plain.key_prefix = "";
  auto key = config::owner_stamp_key(plain);
  broker::connection conn{s.redis};
  auto owner = broker::read_owner(conn, key);
  if (!owner)
    return std::nullopt;
  std::ostringstream said;
  said << "the seed's key names in this Redis (outbox.events, "
          "processed, ...) are the pipeline keyspace of a database (id "
       << text::escaped(owner->id) << ", path " << text::escaped(owner->path)
       << "; stamp " << key
       << ", broker.key_prefix \"\"): the lab deletes those keys before "
          "it starts, so it will not run here. Give the lab another "
          "Redis (--redis)";
  notice(command, said.str(), "error");
  return exit_usage;
}

} // namespace outbox::cli
