#pragma once

// Reading a Redis list whole, as tests check what the pipeline left there.

#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <cstddef>
#include <string>
#include <vector>

namespace outbox::test {

/// Every item of the list at `key`, head first (none if it does not exist).
inline std::vector<std::string> list_items(broker::connection& conn,
                                           const std::string& key) {
  auto r = conn.command({"LRANGE", key, "0", "-1"});
  std::vector<std::string> items;
  for (std::size_t i = 0; i < r->elements; ++i)
    items.push_back(broker::reply_text(*r->element[i]));
  return items;
}

} // namespace outbox::test
