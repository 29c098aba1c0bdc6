#include "startup/keyspace_check.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/key_scan.hpp"
#include "broker/keyspace_owner.hpp"
#include "storage/database_identity.hpp"
#include "text/terminal_text.hpp"

#include <optional>
#include <sstream>
#include <string>

namespace outbox::startup {

namespace {

std::string keyspace_quoted(const std::string& text) {
  return "\"" + text::escaped(text) + "\"";
}

std::string owned_elsewhere(const broker::keyspace_owner& owner,
                            const storage::database_identity& ours,
                            const config::settings& s) {
  std::ostringstream said;
  said << "this Redis keyspace belongs to another database (id "
       << text::escaped(owner.id) << ", path " << text::escaped(owner.path)
       << "), not to " << text::escaped(ours.path) << " (id " << ours.id
       << "): its keys (broker.key_prefix " << keyspace_quoted(s.key_prefix)
       << ", stamp " << text::escaped(config::owner_stamp_key(s))
       << ") hold that database's events, so nothing here is compared "
          "with them. Use that database (--db), or give this one a "
          "keyspace of its own (another broker.key_prefix, or another "
          "Redis)";
  return said.str();
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

std::string legacy_keys_wait(const std::string& record,
                             const config::settings& s) {
  std::ostringstream said;
  said << "this database was upgraded from a version that kept the "
          "pipeline's Redis keys under plain names, and Redis still "
          "holds them ("
       << text::escaped(record)
       << " exists), while this version uses the prefix "
       << keyspace_quoted(s.key_prefix)
       << " (broker.key_prefix), where nothing is stamped yet. Their "
          "queued events and dedup records would look lost. To keep "
          "using them, set \"key_prefix\": \"\" in the broker section "
          "of the config file. To move to the prefix instead: drain "
          "them with that setting (outbox status shows QUEUED and "
          "PROCESSING at 0), then DEL "
       << text::escaped(record) << " and remove the setting";
  return said.str();
}

} // namespace

verdict check_keyspace(storage::database& db, const config::settings& s,
                       keyspace_use use) {
  verdict judged;
  auto ours = db.identity();
  auto key = config::owner_stamp_key(s);
  try {
    broker::connection conn{s.redis};
    auto owner = broker::read_owner(conn, key);
    if (!owner) {
      if (auto record = legacy_record(conn, s, ours)) {
        judged.refuse(outcome::refused_usage, legacy_keys_wait(*record, s));
        return judged;
      }
      if (use == keyspace_use::read)
        return judged;
      owner = broker::stamp_owner(conn, key, {ours.id, ours.path});
    }
    if (owner->id != ours.id)
      judged.refuse(outcome::refused_usage, owned_elsewhere(*owner, ours, s));
    return judged;
  } catch (const broker::broker_error& e) {
    // Down, or a replica that takes no write: the command meets the same
    // Redis next and says so in its own words (status still shows the
    // database half). A stamp refused for a write is written by a later
    // start.
    if (e.code() != broker::broker_errc::unavailable)
      throw;
    return judged;
  }
}

verdict check_lab_keyspace(const config::settings& s) {
  verdict judged;
  config::settings plain = s;
  plain.key_prefix = "";
  auto key = config::owner_stamp_key(plain);
  broker::connection conn{s.redis};
  auto owner = broker::read_owner(conn, key);
  if (!owner)
    return judged;
  std::ostringstream said;
  said << "the seed's key names in this Redis (outbox.events, "
          "processed, ...) are the pipeline keyspace of a database (id "
       << text::escaped(owner->id) << ", path " << text::escaped(owner->path)
       << "; stamp " << key
       << ", broker.key_prefix \"\"): the lab deletes those keys before "
          "it starts, so it will not run here. Give the lab another "
          "Redis (--redis)";
  judged.refuse(outcome::refused_usage, said.str());
  return judged;
}

} // namespace outbox::startup
