#include "broker/server_time.hpp"

#include "broker/broker_error.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>

namespace outbox::broker {

std::int64_t time_ms(const reply& time) {
  throw_if_error(*time, "TIME");
  if (time->type != REDIS_REPLY_ARRAY || time->elements != 2)
    throw broker_error(broker_errc::rejected, "unexpected reply to TIME");
  return std::strtoll(reply_text(*time->element[0]).c_str(), nullptr, 10) *
             1000 +
         std::strtoll(reply_text(*time->element[1]).c_str(), nullptr, 10) /
             1000;
}

std::int64_t server_time_ms(connection& conn) {
  return time_ms(conn.command({"TIME"}));
}

} // namespace outbox::broker
