#include "broker/inbox.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/inbox_script.hpp"

#include <hiredis/hiredis.h>

#include <utility>

namespace outbox::broker {

namespace {

[[noreturn]] void unexpected_reply() {
  throw broker_error(broker_errc::rejected,
                     "unexpected reply from the inbox script");
}

std::string element_text(const redisReply& r, std::size_t index) {
  if (r.elements <= index)
    unexpected_reply();
  return reply_text(*r.element[index]);
}

} // namespace

inbox::inbox(connection& conn, keys names)
    : conn_(conn), names_(std::move(names)), script_(inbox_script_source()) {}

const std::string& inbox::script() {
  return inbox_script_source();
}

applied_entry inbox::apply(const std::string& entry) {
  auto r = script_.run(conn_,
                       {names_.processed, names_.reserved, names_.aggregate_seq,
                        names_.counters, names_.dead_letter},
                       {entry});
  if (r->type != REDIS_REPLY_ARRAY)
    unexpected_reply();
  auto status = element_text(*r, 0);
  applied_entry result;
  if (status == "ok") {
    if (r->elements < 2 || r->element[1]->type != REDIS_REPLY_INTEGER)
      unexpected_reply();
    result.result = applied_entry::outcome::applied;
    result.order_violation = r->element[1]->integer != 0;
  } else if (status == "dup") {
    result.result = applied_entry::outcome::duplicate;
  } else if (status == "dead") {
    result.result = applied_entry::outcome::dead_lettered;
    result.reason = element_text(*r, 1);
  } else {
    unexpected_reply();
  }
  return result;
}

} // namespace outbox::broker
