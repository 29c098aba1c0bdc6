#include "broker/list_commands.hpp"

#include "broker/broker_error.hpp"
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

std::int64_t total_size(connection& conn,
                        const std::vector<std::string>& lists) {
  std::vector<std::vector<std::string>> lens;
  for (const auto& list : lists)
    lens.push_back({"LLEN", list});
  std::int64_t total = 0;
  for (const auto& r : conn.pipeline(lens)) {
    if (r->type != REDIS_REPLY_INTEGER)
      throw broker_error(broker_errc::rejected, "LLEN: " + reply_text(*r));
    total += r->integer;
  }
  return total;
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
