#include "broker/keyspace_owner.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

std::optional<keyspace_owner> read_owner(connection& conn,
                                         const std::string& key) {
  auto r = conn.command({"HMGET", key, "id", "path"});
  throw_if_error(*r, ("HMGET " + key).c_str());
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply to HMGET " + key);
  auto id = reply_text(*r->element[0]);
  auto path = reply_text(*r->element[1]);
  if (id.empty() && path.empty())
    return std::nullopt;
  if (id.empty())
    throw broker_error(broker_errc::rejected,
                       key + " is not a keyspace owner stamp (no id field)");
  return keyspace_owner{id, path};
}

keyspace_owner stamp_owner(connection& conn, const std::string& key,
                           const keyspace_owner& ours) {
  auto r = conn.command({"HSETNX", key, "id", ours.id});
  throw_if_error(*r, ("HSETNX " + key).c_str());
  if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) {
    conn.command({"HSET", key, "path", ours.path});
    return ours;
  }
  return read_owner(conn, key).value_or(ours);
}

} // namespace outbox::broker
