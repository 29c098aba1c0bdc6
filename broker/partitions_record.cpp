#include "broker/partitions_record.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/keys.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace outbox::broker {

namespace {

/// The count in a GET reply; nothing for a missing key. A value that is not
/// a positive integer was not written by us: name the key, so it can be
/// looked at and deleted.
std::optional<std::size_t> count_of(const reply& r, const keys& names) {
  throw_if_error(*r, ("GET " + names.partitions_record()).c_str());
  if (r->type == REDIS_REPLY_NIL)
    return std::nullopt;
  auto text = reply_text(*r);
  // Digits only (stoull would take "-1" or " 4"), and few enough to fit.
  bool digits = !text.empty() && text.size() <= 9 &&
                std::all_of(text.begin(), text.end(),
                            [](unsigned char c) { return std::isdigit(c); });
  auto count = digits ? std::stoull(text) : 0;
  if (count == 0)
    throw broker_error(broker_errc::rejected,
                       names.partitions_record() + " holds \"" + text +
                           "\", not a partition count (delete it once the "
                           "queues are drained)");
  return static_cast<std::size_t>(count);
}

} // namespace

std::size_t record_partitions(connection& conn, const keys& names) {
  auto ours = names.partitions <= 1 ? 1 : names.partitions;
  // One atomic step (NX with GET needs Redis 7): nil when ours was set,
  // else the count recorded earlier, left as it was.
  auto r = conn.command(
      {"SET", names.partitions_record(), std::to_string(ours), "NX", "GET"});
  return count_of(r, names).value_or(ours);
}

std::optional<std::size_t> recorded_partitions(connection& conn,
                                               const keys& names) {
  auto r = conn.command({"GET", names.partitions_record()});
  return count_of(r, names);
}

partitions_agreement agree_on_partitions(connection& conn, const keys& names) {
  partitions_agreement agreement;
  agreement.ours = names.partitions <= 1 ? 1 : names.partitions;
  try {
    agreement.recorded = record_partitions(conn, names);
  } catch (const broker_error& e) {
    if (e.code() != broker_errc::unavailable)
      throw;
    agreement.unrecorded = e.what();
    try {
      agreement.recorded = recorded_partitions(conn, names);
    } catch (const broker_error& unread) {
      // Not even readable (LOADING, MASTERDOWN): the relays wait it out.
      if (unread.code() != broker_errc::unavailable)
        throw;
    }
  }
  return agreement;
}

} // namespace outbox::broker
