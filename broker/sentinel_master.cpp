#include "broker/sentinel_master.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/sentinel.hpp"

#include <hiredis/hiredis.h>

#include <map>
#include <vector>

namespace outbox::broker {

namespace {

/// A SENTINEL MASTER reply's field/value pairs (RESP2: a flat array).
std::map<std::string, std::string> fields_of(const redisReply& r) {
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < r.elements; i += 2)
    fields[reply_text(*r.element[i])] = reply_text(*r.element[i + 1]);
  return fields;
}

std::int64_t number_or_zero(const std::string& text) {
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

} // namespace

sentinel_master describe_master(const sentinel_set& set,
                                const endpoint& master) {
  std::string reasons;
  for (const auto& where : set.sentinels) {
    std::string why;
    try {
      connection sentinel{sentinel_options(set, where)};
      auto r = std::move(
          sentinel.pipeline({{"SENTINEL", "MASTER", set.master_name}}).front());
      if (r->type == REDIS_REPLY_ARRAY) {
        auto fields = fields_of(*r);
        auto described = fields["ip"] + ":" + fields["port"];
        auto at = parse_endpoint(described);
        if (at && at->host == master.host && at->port == master.port) {
          sentinel_master seen;
          seen.asked = where;
          seen.master_for_ms = number_or_zero(fields["role-reported-time"]);
          seen.failover_epoch = number_or_zero(fields["config-epoch"]);
          seen.flags = fields["flags"];
          return seen;
        }
        why = where.to_string() + " describes " + described + " as the master";
      } else {
        why = where.to_string() + ": " + reply_text(*r);
      }
    } catch (const broker_error& e) {
      why = e.what();
    }
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  throw broker_error(broker_errc::unavailable,
                     "no sentinel of master " + set.master_name +
                         " describes " + master.to_string() + ": " + reasons);
}

} // namespace outbox::broker
