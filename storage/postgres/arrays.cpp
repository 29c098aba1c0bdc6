#include "storage/postgres/arrays.hpp"

#include "storage/event_ids.hpp"

namespace outbox::storage::postgres {

namespace {

void append_quoted(std::string& text, const std::string& item) {
  text += '"';
  for (char c : item) {
    if (c == '"' || c == '\\')
      text += '\\';
    text += c;
  }
  text += '"';
}

} // namespace

std::string text_array(const std::vector<std::string>& items) {
  std::string text = "{";
  for (const auto& item : items) {
    if (text.size() > 1)
      text += ',';
    append_quoted(text, item);
  }
  return text + "}";
}

std::string text_array(const std::vector<std::optional<std::string>>& items) {
  std::string text = "{";
  for (const auto& item : items) {
    if (text.size() > 1)
      text += ',';
    if (item)
      append_quoted(text, *item);
    else
      text += "NULL";
  }
  return text + "}";
}

std::string integer_array(const std::vector<std::int64_t>& items) {
  std::string text = "{";
  for (auto item : items) {
    if (text.size() > 1)
      text += ',';
    text += std::to_string(item);
  }
  return text + "}";
}

lease_arrays to_arrays(const std::vector<event_lease>& leases) {
  std::vector<std::string> ids;
  std::vector<std::int64_t> epochs;
  ids.reserve(leases.size());
  epochs.reserve(leases.size());
  for (const auto& lease : leases) {
    // Text that is no UUID names no row: left out, the caller counts it
    // as not held (rejected), like an unknown id, instead of the cast
    // failing the whole statement.
    if (!is_event_id(lease.event_id))
      continue;
    ids.push_back(lease.event_id);
    epochs.push_back(lease.epoch);
  }
  return {text_array(ids), integer_array(epochs)};
}

} // namespace outbox::storage::postgres
