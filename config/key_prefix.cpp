#include "config/settings.hpp"

#include <string>

namespace outbox::config {
namespace {

/// Every name of `names` that is a key or the start of one.
template <class Keys, class Visit>
void for_each_name(Keys& names, Visit visit) {
  for (auto* name :
       {&names.queue, &names.processed, &names.reserved, &names.aggregate_seq,
        &names.counters, &names.dead_letter, &names.processing_prefix})
    visit(*name);
}

} // namespace

void apply_key_prefix(settings& s) {
  if (s.key_prefix_applied)
    return;
  for_each_name(s.broker,
                [&](std::string& name) { name = s.key_prefix + name; });
  s.broker.key_prefix = s.key_prefix;
  s.key_prefix_applied = true;
}

broker::keys unprefixed_keys(const settings& s) {
  auto names = s.broker;
  if (!s.key_prefix_applied)
    return names;
  for_each_name(names, [&](std::string& name) {
    if (name.compare(0, s.key_prefix.size(), s.key_prefix) == 0)
      name.erase(0, s.key_prefix.size());
  });
  names.key_prefix.clear();
  return names;
}

std::string owner_stamp_key(const settings& s) {
  return s.key_prefix + "outbox.owner";
}

} // namespace outbox::config
