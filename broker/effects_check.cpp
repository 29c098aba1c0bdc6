#include "broker/effects_check.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/lua_effects.hpp"
#include "broker/lua_files.hpp"
#include "broker/lua_script.hpp"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

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
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw effects_error("cannot read " + path + ": " + std::strerror(errno));
  std::string text{std::istreambuf_iterator<char>{in},
                   std::istreambuf_iterator<char>{}};
  if (in.bad())
    throw effects_error("cannot read " + path + ": " + std::strerror(errno));
  if (text.size() > max_effects_bytes)
    throw effects_error(
        path + " is " + std::to_string(text.size()) + " bytes, over the " +
        std::to_string(max_effects_bytes) + " an effects file may have");
  if (!is_utf8(text))
    throw effects_error(path + " is not UTF-8 text");
  return text;
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
