#include "broker/process_notes.hpp"

#include "broker/connection.hpp"
#include "broker/server_time.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

process_notes read_process_notes(connection& conn, const std::string& key) {
  auto replies = conn.pipeline({{"TIME"}, {"HGETALL", key}});
  process_notes read;
  read.now = time_ms(replies[0]);
  const auto& hash = replies[1];
  // A refusal (an ACL without HGETALL on the key) is not "no notes": said,
  // so `status` names it rather than report every process gone.
  if (hash->type == REDIS_REPLY_ERROR &&
      reply_text(*hash).rfind("WRONGTYPE", 0) == 0)
    return read; // a key of another type: nobody's notes
  throw_if_error(*hash, ("HGETALL " + key).c_str());
  if (hash->type != REDIS_REPLY_ARRAY)
    return read;
  for (std::size_t i = 0; i + 1 < hash->elements; i += 2)
    read.notes.emplace_back(reply_text(*hash->element[i]),
                            reply_text(*hash->element[i + 1]));
  return read;
}

} // namespace outbox::broker
