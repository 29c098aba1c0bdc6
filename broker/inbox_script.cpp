#include "broker/inbox_script.hpp"

#include "broker/lua_effects.hpp"
#include "broker/lua_files.hpp"

namespace outbox::broker {

std::vector<std::string> inbox_script_keys(const keys& names,
                                           const std::string& lock) {
  return {names.processed,
          names.reserved,
          names.aggregate_seq,
          names.counters,
          names.dead_letter,
          names.seq_gaps(),
          lock.empty() ? names.consumer_lock() : lock};
}

const std::string& inbox_script_source() {
  static const std::string source =
      lua_source({lua_files::wrong_key_type, lua_files::fence_refusal,
                  lua_files::dead_letter_record}) +
      lua_effects() + "\n" + lua_files::inbox_options + lua_files::inbox_entry +
      lua_files::inbox_apply;
  return source;
}

} // namespace outbox::broker
