#include "sink/event_values.hpp"

namespace outbox::sink {

namespace {

/// The field at `path` (names separated by dots: customer.id) of `object`:
/// itself, JSON text when it is an object or an array (a column takes
/// text), null when absent.
nlohmann::json field(const nlohmann::json& object, const std::string& path) {
  // A key that holds the dots itself comes first.
  if (object.is_object()) {
    auto whole = object.find(path);
    if (whole != object.end())
      return whole->is_structured() ? nlohmann::json(whole->dump()) : *whole;
  }
  const nlohmann::json* at = &object;
  std::size_t from = 0;
  while (true) {
    auto dot = path.find('.', from);
    auto name = path.substr(from, dot == std::string::npos ? std::string::npos
                                                           : dot - from);
    if (!at->is_object())
      return nullptr;
    auto found = at->find(name);
    if (found == at->end())
      return nullptr;
    at = &*found;
    if (dot == std::string::npos)
      break;
    from = dot + 1;
  }
  if (at->is_structured())
    return at->dump();
  return *at;
}

} // namespace

nlohmann::json parameter_value(const sink_event& event,
                               const std::string& name) {
  if (name == "event_id")
    return event.event_id;
  if (name == "aggregate_id")
    return event.aggregate_id;
  if (name == "seq")
    return event.seq;
  if (name == "event_type")
    return event.event_type;
  if (name == "payload")
    return event.payload.dump();
  if (name == "headers")
    return event.headers.dump();
  static const std::string payload = "payload.", headers = "headers.";
  if (name.rfind(payload, 0) == 0)
    return field(event.payload, name.substr(payload.size()));
  if (name.rfind(headers, 0) == 0) {
    // Headers are flat: a name may hold dots.
    auto found = event.headers.find(name.substr(headers.size()));
    return found == event.headers.end() ? nlohmann::json{} : *found;
  }
  return nullptr;
}

} // namespace outbox::sink
