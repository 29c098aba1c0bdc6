#include "cli/effects_preflight.hpp"

#include "broker/effects_check.hpp"
#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"

#include <spdlog/spdlog.h>

namespace outbox::cli {

std::optional<int> consumer_inbox_options(broker::connection& conn,
                                          const config::settings& s,
                                          const std::string& who,
                                          broker::inbox_options& out) {
  out = broker::inbox_options{};
  out.unknown = broker::parse_unknown_types(s.consumer.unknown_types);
  const auto& path = s.consumer.effects_lua;
  if (path.empty() || s.run.consumers == 0)
    return std::nullopt;
  try {
    out.effects = broker::read_effects_file(path);
    out.effects_name = path;
    out.effects_prefix = s.key_prefix + "effects:";
    auto types = broker::check_effects(conn, out.effects, path);
    out.known_types.insert(out.known_types.end(), types.begin(), types.end());
    std::string named;
    for (const auto& type : types)
      named += (named.empty() ? "" : ", ") + type;
    spdlog::info("{}: effects of {} from {}, keys under {}", who,
                 named.empty() ? "no event type" : named, path,
                 out.effects_prefix);
    return std::nullopt;
  } catch (const broker::effects_error& e) {
    notice(who, std::string{"consumer.effects_lua: "} + e.what(), "error");
    return exit_usage;
  }
}

} // namespace outbox::cli
