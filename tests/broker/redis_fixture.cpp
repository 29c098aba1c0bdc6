#include "redis_fixture.hpp"

#include <hiredis/hiredis.h>

namespace outbox::test {

std::unique_ptr<redis_server> redis_fixture::server_;

std::vector<std::string> redis_fixture::list(const std::string& key) {
  auto r = conn().command({"LRANGE", key, "0", "-1"});
  std::vector<std::string> result;
  for (size_t i = 0; i < r->elements; ++i)
    result.push_back(broker::reply_text(*r->element[i]));
  return result;
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
