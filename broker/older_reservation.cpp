#include "broker/older_reservation.hpp"

#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

std::string older_reservation(const keys& names) {
  return names.key_prefix + "inventory.reserved";
}

std::int64_t merge_older_reservation(connection& conn, const keys& names) {
  static const std::string source = lua_source(
      {lua_files::wrong_key_type, lua_files::older_reservation_merge});
  lua_script merge{source};
  auto reply = merge.run(conn, {older_reservation(names), names.reserved}, {});
  return reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
}

} // namespace outbox::broker
