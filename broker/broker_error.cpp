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
  // The command first: its rule reads the reply's start, and such a reply
  // may quote a key or an argument that holds "WRONGTYPE".
  if (refuses_the_command(error_reply))
    return refusal_reason::command_refused;
  // Anywhere in the reply: Redis 7 passes a failed redis.call's reply on as
  // it was, Redis 6 wraps it ("ERR Error running script ...: WRONGTYPE"),
  // and the scripts' wrong_key_type words it the same way.
  if (error_reply.find("WRONGTYPE") != std::string_view::npos)
    return refusal_reason::wrong_type;
  return refusal_reason::other;
}

} // namespace outbox::broker
