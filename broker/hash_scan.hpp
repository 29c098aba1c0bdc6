#pragma once

#include "broker/broker_fwd.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace outbox::broker {

/// One HSCAN page: field -> value pairs.
using hash_page = std::vector<std::pair<std::string, std::string>>;

/// Reads a hash page by page (HSCAN with COUNT `page_hint`), so a large hash
/// never blocks Redis; calls `on_page` for each page. Every field present
/// for the whole scan is seen at least once, maybe twice; fields changed
/// meanwhile may or may not be.
template <class OnPage>
void scan_hash(connection& conn, const std::string& key, std::size_t page_hint,
               OnPage on_page);

/// The page-at-a-time step scan_hash loops over: from `cursor`, the next
/// page, and the cursor to continue from ("0" when done).
std::string scan_hash_page(connection& conn, const std::string& key,
                           const std::string& cursor, std::size_t page_hint,
                           hash_page& page);

/// For each of `fields`, its value in the hash `key`, nothing when absent
/// (one HMGET).
std::vector<std::optional<std::string>>
hash_values(connection& conn, const std::string& key,
            const std::vector<std::string>& fields);

template <class OnPage>
void scan_hash(connection& conn, const std::string& key, std::size_t page_hint,
               OnPage on_page) {
  std::string cursor = "0";
  hash_page page;
  do {
    cursor = scan_hash_page(conn, key, cursor, page_hint, page);
    on_page(page);
  } while (cursor != "0");
}

} // namespace outbox::broker
