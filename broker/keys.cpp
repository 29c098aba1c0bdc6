#include "broker/keys.hpp"

#include <algorithm>
#include <cstdint>

namespace outbox::broker {

std::uint64_t fnv1a_64(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string keys::queue_for(const std::string& aggregate_id) const {
  if (partitions <= 1)
    return queue;
  return partition(fnv1a_64(aggregate_id) % partitions);
}

std::string keys::partition(std::size_t index) const {
  if (partitions <= 1)
    return queue;
  return queue + "." + std::to_string(index);
}

std::string keys::doorbell_for(const std::string& list) const {
  return list + ":ready";
}

std::string keys::consumer_lock() const {
  return queue + ".consumers";
}

std::string keys::consumer_processes() const {
  return consumer_lock() + ".processes";
}

std::string keys::relay_processes() const {
  return queue + ".relays";
}

std::string keys::partitions_record() const {
  return queue + ".partitions";
}

std::string keys::trimmed_summary() const {
  return processed + ".trimmed";
}

std::string keys::trimmed_aggregates() const {
  return processed + ".trimmed_aggregates";
}

std::string keys::dead_letter_dropped() const {
  return dead_letter + ".dropped";
}

std::string keys::seq_gaps() const {
  return aggregate_seq + ".gaps";
}

std::string keys::effects_prefix() const {
  return key_prefix + "effects:";
}

std::string keys::trimmed_reserved() const {
  return processed + ".trimmed_reserved";
}

std::vector<std::string> keys::owned_partitions(std::size_t index,
                                                std::size_t consumers) const {
  std::vector<std::string> owned;
  auto count = partitions > 1 ? partitions : 1;
  for (std::size_t p = 0; p < count; ++p)
    if (consumers > 0 && p % consumers == index)
      owned.push_back(partition(p));
  return owned;
}

std::string keys::processing_for(const std::string& queue,
                                 const std::string& consumer) const {
  bool prefixed = !key_prefix.empty() &&
                  queue.compare(0, key_prefix.size(), key_prefix) == 0;
  return processing_prefix + queue.substr(prefixed ? key_prefix.size() : 0) +
         "/" + consumer;
}

std::optional<std::string> keys::queue_of(const std::string& list) const {
  if (list.compare(0, processing_prefix.size(), processing_prefix) != 0)
    return std::nullopt;
  auto slash = list.rfind('/');
  if (slash == std::string::npos || slash <= processing_prefix.size())
    return std::nullopt;
  auto named =
      list.substr(processing_prefix.size(), slash - processing_prefix.size());
  auto ours = key_prefix + named;
  if (key_prefix.empty() || is_partition(ours))
    return ours;
  // An earlier version's name held the prefix already. Asked only when the
  // name read as this version's is no configured list: a queue whose own
  // name starts with the prefix ("outbox." before "outbox.events") is read
  // this version's way first.
  if (named.compare(0, key_prefix.size(), key_prefix) == 0 &&
      is_partition(named))
    return named;
  return ours;
}

bool keys::is_partition(const std::string& list) const {
  for (std::size_t i = 0; i < std::max<std::size_t>(partitions, 1); ++i)
    if (partition(i) == list)
      return true;
  return false;
}

} // namespace outbox::broker
