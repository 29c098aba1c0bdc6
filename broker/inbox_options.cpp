#include "broker/inbox_options.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace outbox::broker {

const char* unknown_types_name(unknown_types policy) {
  return policy == unknown_types::record ? "record" : "dead-letter";
}

unknown_types parse_unknown_types(const std::string& word) {
  if (word == "record")
    return unknown_types::record;
  if (word == "dead-letter")
    return unknown_types::dead_letter;
  throw std::invalid_argument(
      "unknown_types must be record or dead-letter, got \"" + word + "\"");
}

std::vector<std::string> inbox_options::demo_event_types() {
  // OrderPlaced reserves stock (the built-in effects); the follow-ups the
  // load generator and the lab append have no effect but are the demo's
  // own.
  return {"OrderPlaced", "OrderPaid", "OrderShipped", "OrderDelivered"};
}

std::string inbox_script_options(const fence& fenced_by,
                                 const inbox_options& options) {
  if (options.unknown == unknown_types::record && !options.effects &&
      options.effects_prefix.empty() && options.sink_types.empty())
    return fenced_by.holder;
  nlohmann::json object{{"holder", fenced_by.holder},
                        {"unknown_types", unknown_types_name(options.unknown)},
                        {"known_types", options.known_types}};
  if (options.effects) {
    object["effects"] = *options.effects;
    object["effects_name"] = options.effects_name;
  }
  if (!options.effects_prefix.empty())
    object["effects_prefix"] = options.effects_prefix;
  if (!options.sink_types.empty())
    object["sink_types"] = options.sink_types;
  // The effects are UTF-8 (read_effects_file): dump() does not throw.
  return object.dump();
}

std::string with_call_options(const std::string& argument,
                              const std::string& fields) {
  if (fields.size() <= 2)
    return argument;
  // Text, not a parse: the argument may carry a 256 KiB effects file, and
  // this runs for every call.
  auto object = argument.rfind('{', 0) == 0
                    ? argument
                    : nlohmann::json{{"holder", argument}}.dump();
  return object.substr(0, object.size() - 1) + "," + fields.substr(1);
}

} // namespace outbox::broker
