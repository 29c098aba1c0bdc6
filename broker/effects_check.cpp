#include "broker/effects_check.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/lua_effects.hpp"
#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"
#include "text/utf8_file.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

namespace {

constexpr const char* refusal_mark = "OUTBOX_EFFECTS ";

const std::string& check_source() {
  // no-writes: Redis refuses any write the file's top level might try.
  static const std::string source = "#!lua flags=no-writes\n" + lua_effects() +
                                    lua_source({lua_files::effects_check});
  return source;
}

} // namespace

std::string read_effects_file(const std::string& path) {
  try {
    return text::read_utf8_file(path, max_effects_bytes, "an effects file");
  } catch (const text::utf8_file_error& e) {
    throw effects_error(e.what());
  }
}

std::vector<std::string> check_effects(connection& conn,
                                       const std::string& source,
                                       const std::string& name) {
  lua_script check{check_source()};
  try {
    auto r = check.run(conn, {}, {source, name});
    std::vector<std::string> types;
    if (r->type != REDIS_REPLY_ARRAY)
      throw broker_error(broker_errc::rejected,
                         "unexpected reply from the effects check");
    for (std::size_t i = 0; i < r->elements; ++i)
      types.push_back(reply_text(*r->element[i]));
    return types;
  } catch (const broker_error& e) {
    std::string what = e.what();
    auto mark = what.find(refusal_mark);
    if (e.code() != broker_errc::rejected || mark == std::string::npos)
      throw;
    throw effects_error(what.substr(mark + std::strlen(refusal_mark)));
  }
}

} // namespace outbox::broker
