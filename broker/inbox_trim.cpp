#include "broker/inbox_trim.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/lua_files.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

inbox_trim::inbox_trim(connection& conn, keys names)
    : conn_(conn), names_(std::move(names)),
      script_(lua_source({lua_files::wrong_key_type, lua_files::inbox_trim})) {}

trim_result inbox_trim::trim(std::int64_t cutoff_ms,
                             const std::vector<std::string>& event_ids) {
  trim_result result;
  if (event_ids.empty())
    return result;
  std::vector<std::string> args{std::to_string(cutoff_ms)};
  args.insert(args.end(), event_ids.begin(), event_ids.end());
  auto reply = script_.run(conn_,
                           {names_.processed, names_.trimmed_summary(),
                            names_.trimmed_reserved(),
                            names_.trimmed_aggregates(), names_.seq_gaps()},
                           args);
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3)
    throw broker_error(broker_errc::rejected,
                       "unexpected reply of the trim script");
  result.trimmed = reply->element[0]->integer;
  result.kept = reply->element[1]->integer;
  result.gone = reply->element[2]->integer;
  return result;
}

} // namespace outbox::broker
