#pragma once

#include "broker/keys.hpp"

#include <cstddef>
#include <string>
#include <unordered_set>

namespace outbox::broker {

class connection;

/// Of `wanted`, the event_ids with an entry waiting in a queue partition or
/// held in a processing list. Each of them can still be delivered, so its
/// dedup record must stay. Queues are read in pages of `page` entries
/// (LRANGE), processing lists whole (each holds at most one consumer's
/// burst); only the ids of `wanted` are kept, so memory is bounded by
/// `wanted` and one page. Unparseable entries are skipped: the consumer
/// dead-letters them without a record. Lists of an earlier, larger
/// broker.partitions are not read; the inbox script's seq check still
/// absorbs a copy from them (see inbox_script.cpp).
std::unordered_set<std::string>
queued_among(connection& conn, const keys& names,
             const std::unordered_set<std::string>& wanted,
             std::size_t page = 1000);

} // namespace outbox::broker
