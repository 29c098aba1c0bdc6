#include "broker/inbox_reader.hpp"

#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>
#include <string>

namespace outbox::broker {

namespace {

/// Reads a hash page by page so a large `processed` never blocks Redis.
template <class OnField>
void scan_hash(connection& conn, const std::string& key, OnField on_field) {
  std::string cursor = "0";
  do {
    auto page = conn.command({"HSCAN", key, cursor, "COUNT", "1000"});
    if (page->type != REDIS_REPLY_ARRAY || page->elements != 2)
      throw std::runtime_error("unexpected HSCAN reply for " + key);
    cursor = reply_text(*page->element[0]);
    const redisReply& fields = *page->element[1];
    for (size_t i = 0; i + 1 < fields.elements; i += 2)
      on_field(reply_text(*fields.element[i]),
               reply_text(*fields.element[i + 1]));
  } while (cursor != "0");
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
  scan_hash(conn, names.processed, [&](std::string id, std::string result) {
    snapshot.processed.emplace(std::move(id), std::move(result));
  });
  scan_hash(conn, names.reserved, [&](std::string sku, std::string qty) {
    snapshot.reserved[std::move(sku)] = std::stoll(qty);
  });
  scan_hash(conn, names.trimmed_reserved(),
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
