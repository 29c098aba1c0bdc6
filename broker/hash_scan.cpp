#include "broker/hash_scan.hpp"

#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>

namespace outbox::broker {

std::string scan_hash_page(connection& conn, const std::string& key,
                           const std::string& cursor, std::size_t page_hint,
                           hash_page& page) {
  auto reply =
      conn.command({"HSCAN", key, cursor, "COUNT", std::to_string(page_hint)});
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
    throw std::runtime_error("unexpected HSCAN reply for " + key);
  const redisReply& fields = *reply->element[1];
  page.clear();
  for (std::size_t i = 0; i + 1 < fields.elements; i += 2)
    page.emplace_back(reply_text(*fields.element[i]),
                      reply_text(*fields.element[i + 1]));
  return reply_text(*reply->element[0]);
}

std::vector<std::optional<std::string>>
hash_values(connection& conn, const std::string& key,
            const std::vector<std::string>& fields) {
  if (fields.empty())
    return {};
  std::vector<std::string> command{"HMGET", key};
  command.insert(command.end(), fields.begin(), fields.end());
  auto reply = conn.command(command);
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != fields.size())
    throw std::runtime_error("unexpected HMGET reply for " + key);
  std::vector<std::optional<std::string>> values;
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (reply->element[i]->type == REDIS_REPLY_NIL)
      values.emplace_back();
    else
      values.emplace_back(reply_text(*reply->element[i]));
  return values;
}

} // namespace outbox::broker
