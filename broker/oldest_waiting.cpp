#include "broker/oldest_waiting.hpp"

#include "broker/connection.hpp"
#include "broker/server_time.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace outbox::broker {

namespace {

/// A head bigger than this is not parsed here: status stays cheap.
constexpr std::size_t largest_head_read = 64 * 1024;

/// When the entry was published, or else committed (entries of relays
/// that did not say when they published).
std::optional<std::int64_t> published_at(const std::string& entry) {
  if (entry.size() > largest_head_read)
    return std::nullopt;
  auto parsed = nlohmann::json::parse(entry, nullptr, false);
  if (!parsed.is_object())
    return std::nullopt;
  for (const char* field : {"published_at", "committed_at"}) {
    auto at = parsed.find(field);
    if (at != parsed.end() && at->is_number_integer())
      return at->get<std::int64_t>();
  }
  return std::nullopt;
}

} // namespace

std::optional<std::int64_t> oldest_waiting_ms(connection& conn,
                                              const keys& names) {
  std::vector<std::vector<std::string>> commands{{"TIME"}};
  auto lists = std::max<std::size_t>(names.partitions, 1);
  for (std::size_t i = 0; i < lists; ++i)
    commands.push_back({"LINDEX", names.partition(i), "0"});
  auto replies = conn.pipeline(commands);
  auto now = time_ms(replies[0]);
  std::optional<std::int64_t> oldest;
  for (std::size_t i = 1; i < replies.size(); ++i) {
    const auto& head = *replies[i];
    if (head.type != REDIS_REPLY_STRING)
      continue; // empty (nil), or a key of another type
    auto at = published_at(reply_text(head));
    auto waited = at ? std::max<std::int64_t>(now - *at, 0)
                     : std::numeric_limits<std::int64_t>::max();
    oldest = std::max(oldest.value_or(0), waited);
  }
  return oldest;
}

} // namespace outbox::broker
