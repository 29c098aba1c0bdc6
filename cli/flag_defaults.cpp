#include "cli/flag_defaults.hpp"

#include "config/settings.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

namespace outbox::cli {

namespace {

const nlohmann::json& defaults() {
  static const auto json = nlohmann::json::parse(config::to_json({}));
  return json;
}

void annotate(CLI::App& command) {
  // "(run.relays)" at the end, or "(redis.host and redis.port)".
  static const std::regex ends_with_key{
      R"(^(.*) \(([a-z_]+\.[a-z_]+)(?: and ([a-z_]+\.[a-z_]+))?\)$)"};
  for (auto* option : command.get_options()) {
    std::smatch m;
    const std::string description = option->get_description();
    if (!std::regex_match(description, m, ends_with_key))
      continue;
    auto first = config_default(m[2].str());
    if (first.empty())
      continue;
    std::string shown = first, keys = m[2].str();
    if (m[3].matched) {
      auto second = config_default(m[3].str());
      if (second.empty())
        continue;
      // host and port read as one address.
      shown += ":" + second;
      keys += " and " + m[3].str();
    }
    option->description(m[1].str() + " (default " + shown + ", " + keys + ")");
  }
  for (auto* sub : command.get_subcommands({}))
    annotate(*sub);
}

} // namespace

std::string config_default(const std::string& key) {
  auto dot = key.find('.');
  if (dot == std::string::npos)
    return {};
  const auto& all = defaults();
  auto section = all.find(key.substr(0, dot));
  if (section == all.end() || !section->is_object())
    return {};
  auto value = section->find(key.substr(dot + 1));
  if (value == section->end())
    return {};
  if (value->is_string())
    return value->get<std::string>();
  if (value->is_number_float()) {
    // 0.5 stays 0.5, 0.0 reads 0: as a user would type it.
    std::ostringstream shown;
    shown << value->get<double>();
    return shown.str();
  }
  return value->dump();
}

void show_config_defaults(CLI::App& app) {
  annotate(app);
}

} // namespace outbox::cli
