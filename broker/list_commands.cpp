#include "broker/list_commands.hpp"

#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

std::vector<std::string> whole_list(connection& conn, const std::string& list) {
  auto r = conn.command({"LRANGE", list, "0", "-1"});
  std::vector<std::string> entries;
  if (r->type != REDIS_REPLY_ARRAY)
    return entries;
  entries.reserve(r->elements);
  for (std::size_t i = 0; i < r->elements; ++i)
    entries.push_back(reply_text(*r->element[i]));
  return entries;
}

std::int64_t list_size(connection& conn, const std::string& list) {
  return conn.command({"LLEN", list})->integer;
}

void push_to_list(connection& conn, const std::string& list,
                  const std::string& entry) {
  conn.command({"RPUSH", list, entry});
}

std::int64_t delete_keys(connection& conn,
                         const std::vector<std::string>& keys) {
  std::vector<std::string> argv{"DEL"};
  argv.insert(argv.end(), keys.begin(), keys.end());
  return conn.command(argv)->integer;
}

} // namespace outbox::broker
