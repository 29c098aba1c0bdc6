#include "broker/broker_error.hpp"

#include "broker/command_refusal.hpp"

namespace outbox::broker {

const char* to_string(broker_errc code) {
  switch (code) {
  case broker_errc::unavailable:
    return "unavailable";
  case broker_errc::rejected:
    return "rejected";
  case broker_errc::fenced:
    return "fenced";
  }
  return "unknown";
}

refusal_reason refusal_reason_of(std::string_view error_reply) {

  // the redis.call that failed, or words it the same way (wrong_key_type).
  if (error_reply.find("WRONGTYPE") != std::string_view::npos)
    return refusal_reason::wrong_type;
  if (refuses_the_command(error_reply))
    return refusal_reason::command_refused;
  return refusal_reason::other;
}

} // namespace outbox::broker
