#include "tests/broker/redis_fixture.hpp"
#include "support/redis_lists.hpp"

#include <hiredis/hiredis.h>

namespace outbox::test {

std::unique_ptr<redis_server> redis_fixture::server_;

std::vector<std::string> redis_fixture::list(const std::string& key) {
  return list_items(conn(), key);
}

std::string redis_fixture::hash_field(const std::string& key,
                                      const std::string& field) {
  return broker::reply_text(*conn().command({"HGET", key, field}));
}

long long redis_fixture::hash_integer(const std::string& key,
                                      const std::string& field) {
  auto text = hash_field(key, field);
  return text.empty() ? 0 : std::stoll(text);
}

} // namespace outbox::test
