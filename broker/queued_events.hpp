#pragma once

#include "broker/keys.hpp"

#include <string>
#include <unordered_set>

namespace outbox::broker {

class connection;

/// The event_ids of every entry waiting in a queue partition or held in a
/// processing list (each list read whole). Each of them can still be
/// delivered, so its dedup record must stay. Unparseable entries are
/// skipped: the consumer dead-letters them without a record. Lists of an
/// earlier, larger broker.partitions are not read; the inbox script's seq
/// check still absorbs a copy from them (see inbox_script.cpp).
std::unordered_set<std::string> queued_event_ids(connection& conn,
                                                 const keys& names);

} // namespace outbox::broker
