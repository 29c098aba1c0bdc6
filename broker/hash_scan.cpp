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

} // namespace outbox::broker
