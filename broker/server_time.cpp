#include "broker/server_time.hpp"

#include "broker/broker_error.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>

namespace outbox::broker {

namespace {

/// One field of a TIME reply: digits only. A proxy or a fake answering
/// something else must not make the clock read 0 (trim would then take
/// every record for a young one and report success).
std::int64_t time_field(const redisReply& field) {
  auto text = reply_text(field);
  char* end = nullptr;
  auto value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size())
    throw broker_error(broker_errc::rejected, "unexpected reply to TIME");
  return value;
}

} // namespace

std::int64_t time_ms(const reply& time) {
  throw_if_error(*time, "TIME");
  if (time->type != REDIS_REPLY_ARRAY || time->elements != 2)
    throw broker_error(broker_errc::rejected, "unexpected reply to TIME");
  return time_field(*time->element[0]) * 1000 +
         time_field(*time->element[1]) / 1000;
}

std::int64_t server_time_ms(connection& conn) {
  return time_ms(conn.command({"TIME"}));
}

} // namespace outbox::broker
