#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

namespace outbox::broker {

/// Of `wanted`, the event_ids with an entry waiting in a queue partition or
/// held in a processing list. Each of them can still be delivered, so its
/// dedup record must stay. Queues are read in pages of `page` entries
/// (LRANGE), processing lists whole (each holds at most one consumer's
/// burst); only the ids of `wanted` are kept, so memory is bounded by
/// `wanted` and one page. An entry as relays write it gives its id without
/// being parsed (plain_event_id); the others are decoded, and unparseable
/// ones are skipped: the consumer
/// dead-letters them without a record. Lists of an earlier, larger
/// broker.partitions are not read; the inbox script's seq check still
/// absorbs a copy from them (see broker/lua/inbox_options.lua).
std::unordered_set<std::string>
queued_among(connection& conn, const keys& names,
             const std::unordered_set<std::string>& wanted,
             std::size_t page = 1000);

/// Of `candidates`, the event_ids with no entry in flight (queued_among):
/// the records a trim may forget. Adds the others to `kept_queued`.
std::vector<std::string>
not_queued(connection& conn, const keys& names,
           const std::unordered_set<std::string>& candidates,
           std::int64_t& kept_queued);

/// Calls `visit(event_id, in_processing)` for every decodable entry of the
/// queue partitions and processing lists, read as queued_among reads them
/// (processing lists, queues page by page, processing lists again): an
/// entry that made one move while they were read is seen at least once.
void visit_in_flight(
    connection& conn, const keys& names, std::size_t page,
    const std::function<void(const std::string&, bool)>& visit);

} // namespace outbox::broker
