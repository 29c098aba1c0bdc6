#include "broker/dead_letter_script.hpp"

#include "broker/broker_error.hpp"
#include "broker/lua_files.hpp"
#include "text/plural.hpp"

#include <hiredis/hiredis.h>

#include <cstdint>

namespace outbox::broker {

lua_script dead_letter_script(const char* body) {
  return lua_script{lua_source({lua_files::wrong_key_type, body})};
}

bool dead_letter_script_done(const redisReply& r, std::size_t records,
                             const std::string& script) {
  if (r.type == REDIS_REPLY_INTEGER &&
      static_cast<std::size_t>(r.integer) == records)
    return true;
  if (r.type == REDIS_REPLY_ARRAY && r.elements == 1 &&
      reply_text(*r.element[0]) == "changed")
    return false;
  throw broker_error(broker_errc::rejected,
                     "unexpected reply from the dead-letter " + script +
                         " script");
}

void throw_dead_letters_kept_changing(const std::string& edit,
                                      const std::string& edited,
                                      std::size_t records) {
  throw broker_error(
      broker_errc::rejected,
      "the dead-letter list kept changing under the " + edit + " (" +
          text::plural(static_cast<std::int64_t>(records), "record") + " to " +
          edit + "); nothing was " + edited + ", try again");
}

} // namespace outbox::broker
