#include "broker/inbox_reader.hpp"

#include "broker/connection.hpp"
#include "broker/hash_scan.hpp"

#include <hiredis/hiredis.h>

#include <string>

namespace outbox::broker {

namespace {

/// Calls on_field for every field of a hash, a page of 1000 at a time.
template <class OnField>
void for_each_field(connection& conn, const std::string& key,
                    OnField on_field) {
  scan_hash(conn, key, 1000, [&](hash_page& page) {
    for (auto& [field, value] : page)
      on_field(std::move(field), std::move(value));
  });
}

std::int64_t hash_length(connection& conn, const std::string& key) {
  return conn.command({"HLEN", key})->integer;
}

std::int64_t trimmed_count(connection& conn, const keys& names) {
  auto count = conn.command({"HGET", names.trimmed_summary(), "records"});
  return count->type == REDIS_REPLY_STRING ? std::stoll(reply_text(*count)) : 0;
}

} // namespace

inbox_snapshot read_inbox(connection& conn, const keys& names) {
  inbox_snapshot snapshot;
  auto before = hash_length(conn, names.processed);
  auto trimmed_before_read = trimmed_count(conn, names);
  for_each_field(conn, names.processed,
                 [&](std::string id, std::string result) {
                   snapshot.processed.emplace(std::move(id), std::move(result));
                 });
  for_each_field(conn, names.reserved, [&](std::string sku, std::string qty) {
    snapshot.reserved[std::move(sku)] = std::stoll(qty);
  });
  for_each_field(conn, names.trimmed_reserved(),
                 [&](std::string sku, std::string qty) {
                   snapshot.trimmed_reserved[std::move(sku)] = std::stoll(qty);
                 });
  auto cutoff = conn.command({"HGET", names.trimmed_summary(), "before"});
  if (cutoff->type == REDIS_REPLY_STRING)
    snapshot.trimmed_before = std::stoll(reply_text(*cutoff));
  auto after = hash_length(conn, names.processed);
  snapshot.trimmed_records = trimmed_count(conn, names);
  snapshot.consistent =
      before == after && trimmed_before_read == snapshot.trimmed_records &&
      after == static_cast<std::int64_t>(snapshot.processed.size());
  return snapshot;
}

} // namespace outbox::broker
