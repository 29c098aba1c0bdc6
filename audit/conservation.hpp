#pragma once

#include "audit/type_figures.hpp"
#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "metrics/audit_verdict.hpp"
#include "storage/ledger.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::audit {

/// The verdict's vocabulary lives with the run report's
/// (metrics/audit_verdict.hpp), which carries it: these are its names here.
using check = metrics::audit_check;
using verdict = metrics::audit_verdict;

class audit_tables;

/// Compares what the database says was committed and published with what
/// the consumers applied. Pure: the inputs are snapshots, so tests can feed
/// any state (they are loaded into an in-memory audit_tables and judged by
/// the overload below). The snapshots are taken in this order (audit_pipeline
/// does): `ledger`, then `queues`, then `inbox`, then `later_rows` (rows
/// committed after `ledger` was read; only needed when `inbox` names unknown
/// events). Checks:
/// - published_processed, dead_letters, events_once: see
///   delivery_checks.hpp (every published event accounted for by its id,
///   none waiting unapplied in the dead-letter list, no lifecycle event of
///   an order written twice).
/// - no_orphan_effects: every `processed` entry has an outbox row, or is
///   purged history: its aggregate's remaining rows all have higher seqs
///   (`outbox purge` deletes the oldest published rows of an aggregate), or
///   it has none left and `aggregate_heads` (the last seq of aggregates a
///   purge emptied) covers the seq; purged OrderPlaced effects count in
///   reserved_matches from the inbox's own record (sku, qty).
/// - reserved_matches: effects:inventory.reserved per sku equals the sum of qty
/// of
///   processed OrderPlaced events plus the trimmed ones' summed effect;
///   skipped while consumers (or a trim) were changing it.
/// - applied_once: per aggregate, records plus trimmed records do not
///   outnumber its events (an event applied again after a trim).
/// - order_kept: the consumers counted no order violation.
verdict
evaluate(const std::vector<storage::ledger_row>& ledger,
         const broker::inbox_snapshot& inbox,
         const broker::broker_stats& queues,
         const std::vector<storage::ledger_row>& later_rows = {},
         const std::map<std::string, std::int64_t>& aggregate_heads = {});

/// The same checks over snapshots kept in `tables` (the ledger, later rows,
/// heads, `processed` and trimmed_aggregates; `inbox`'s maps of those are
/// not read), streamed from SQL: memory holds the per-sku maps and a few
/// example ids, not the events. Throws store_error.
verdict evaluate(audit_tables& tables, const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues);

} // namespace outbox::audit
