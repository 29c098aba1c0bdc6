#include "broker/lua_effects.hpp"

#include "broker/lua_files.hpp"

#include <stdexcept>

namespace outbox::broker {

namespace effect_files {
/// effects/orders.lua (cmake/EmbedText.cmake).
extern const char* const orders;
} // namespace effect_files

const char* const builtin_effects_name = "builtin:orders";

const std::string& lua_effects() {
  static const std::string source = [] {
    // effects/orders.lua goes in place of the marker line, inside the
    // function that hides Redis from it.
    const std::string marker = "--[[effects/orders.lua]]";
    std::string builtin = lua_files::builtin_effects;
    auto at = builtin.find(marker);
    if (at == std::string::npos)
      throw std::logic_error("broker/lua/builtin_effects.lua lost its line " +
                             marker);
    builtin.replace(at, marker.size(), effect_files::orders);
    return lua_source({lua_files::load_effects}) + builtin;
  }();
  return source;
}

} // namespace outbox::broker
