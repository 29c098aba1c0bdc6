#include "fuzz/checks.hpp"

#include "broker/entry.hpp"
#include "config/settings.hpp"

#include <exception>
#include <variant>

namespace outbox::fuzz {
namespace {

bool same(const broker::event_entry& a, const broker::event_entry& b) {
  return a.event_id == b.event_id && a.aggregate_id == b.aggregate_id &&
         a.seq == b.seq && a.event_type == b.event_type &&
         a.payload == b.payload && a.headers == b.headers &&
         a.committed_at == b.committed_at && a.published_at == b.published_at;
}

std::string unexpected(const char* where, const std::exception& e) {
  return std::string{where} + " threw: " + e.what();
}

std::optional<std::string> entry_round_trip(const broker::event_entry& first) {
  std::string text;
  try {
    text = broker::encode(first);
  } catch (const std::exception& e) {
    return unexpected("encode of a decoded entry", e);
  }
  auto again = broker::decode(text);
  if (auto* bad = std::get_if<broker::malformed_entry>(&again))
    return "decode rejects encode(decode(x)): " + bad->reason + "; " + text;
  const auto& second = std::get<broker::event_entry>(again);
  if (!same(first, second))
    return "decode(encode(e)) differs from e: " + text;
  if (broker::encode(second) != text)
    return "encode is not stable: " + text;
  return std::nullopt;
}

} // namespace

std::optional<std::string> check_entry(const std::string& bytes) {
  try {
    auto decoded = broker::decode(bytes);
    if (auto* bad = std::get_if<broker::malformed_entry>(&decoded)) {
      if (bad->reason.empty())
        return std::string{"malformed entry without a reason"};
      return std::nullopt;
    }
    return entry_round_trip(std::get<broker::event_entry>(decoded));
  } catch (const std::exception& e) {
    return unexpected("decode", e);
  }
}

std::optional<std::string> check_config(const std::string& bytes) {
  config::settings loaded;
  try {
    loaded = config::apply_json(bytes, "fuzz");
  } catch (const config::config_error&) {
    return std::nullopt;
  } catch (const std::exception& e) {
    return unexpected("apply_json", e);
  }
  try {
    config::validate(loaded);
  } catch (const config::config_error&) {
    // Invalid as a whole, but each key passed its own check: still shown
    // by `outbox config --show`, so the round trip below must hold.
  } catch (const std::exception& e) {
    return unexpected("validate", e);
  }
  try {
    auto shown = config::to_json(loaded);
    auto reloaded = config::apply_json(shown, "to_json");
    if (config::to_json(reloaded) != shown)
      return "apply_json(to_json(s)) differs from s: " + shown;
  } catch (const std::exception& e) {
    return unexpected("re-loading to_json", e);
  }
  return std::nullopt;
}

} // namespace outbox::fuzz
