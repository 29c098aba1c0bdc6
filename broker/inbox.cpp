#include "broker/inbox.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/inbox_script.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

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

long long element_integer(const redisReply& r, std::size_t index) {
  if (r.elements <= index || r.element[index]->type != REDIS_REPLY_INTEGER)
    unexpected_reply();
  return r.element[index]->integer;
}

/// One entry's part of the reply: {'ok', violation, committed_at},
/// {'dup', committed_at} or {'dead', reason}.
applied_entry parse_outcome(const redisReply& r) {
  if (r.type != REDIS_REPLY_ARRAY)
    unexpected_reply();
  auto status = element_text(r, 0);
  applied_entry result;
  if (status == "ok") {
    result.result = applied_entry::outcome::applied;
    result.order_violation = element_integer(r, 1) != 0;
    result.committed_at = element_integer(r, 2);
  } else if (status == "dup") {
    result.result = applied_entry::outcome::duplicate;
    result.committed_at = element_integer(r, 1);
  } else if (status == "dead") {
    result.result = applied_entry::outcome::dead_lettered;
    result.reason = element_text(r, 1);
  } else {
    unexpected_reply();
  }
  return result;
}

} // namespace

inbox::inbox(connection& conn, keys names, fence fenced_by,
             inbox_options options)
    : conn_(conn), names_(std::move(names)), fence_(std::move(fenced_by)),
      first_argument_(inbox_script_options(fence_, options)),
      script_(inbox_script_source()) {}

const std::string& inbox::script() {
  return inbox_script_source();
}

applied_entry inbox::apply(const std::string& entry) {
  return apply_batch({entry}).front();
}

template <class Call>
void inbox::in_calls(const std::vector<std::string>& entries, Call call) {
  auto first = entries.begin();
  while (first != entries.end()) {
    // At least one entry per call, however big.
    auto last = first + 1;
    std::size_t bytes = first->size();
    while (last != entries.end() &&
           static_cast<std::size_t>(last - first) < max_call_entries &&
           bytes + last->size() <= max_call_bytes)
      bytes += (last++)->size();
    call(first, last);
    first = last;
  }
}

std::vector<applied_entry>
inbox::apply_batch(const std::vector<std::string>& entries,
                   const sink_outcomes& sink) {
  std::vector<applied_entry> results;
  results.reserve(entries.size());
  // The refusals' text comes from the sink's messages: bytes that are not
  // UTF-8 become U+FFFD rather than fail the call.
  std::string with_sink;
  nlohmann::json fields = nlohmann::json::object();
  if (!sink.done.empty())
    fields["sink_done"] = sink.done;
  if (!sink.refused.empty())
    fields["refused"] = sink.refused;
  if (!sink.skipped.empty())
    fields["sink_skipped"] = sink.skipped;
  const std::string& argument =
      fields.empty()
          ? first_argument_
          : (with_sink = with_call_options(
                 first_argument_,
                 fields.dump(-1, ' ', false,
                             nlohmann::json::error_handler_t::replace)));
  in_calls(entries, [&](auto first, auto last) {
    apply_call(first, last, argument, results);
  });
  return results;
}

std::vector<classified_entry>
inbox::classify(const std::vector<std::string>& entries) {
  std::vector<classified_entry> fresh;
  fresh.reserve(entries.size());
  auto argument = with_call_options(first_argument_, R"({"classify":true})");
  in_calls(entries, [&](auto first, auto last) {
    auto r = call(first, last, argument);
    for (std::size_t i = 0; i < r->elements; ++i) {
      const auto& one = *r->element[i];
      if (one.type != REDIS_REPLY_ARRAY || one.elements != 3)
        unexpected_reply();
      fresh.push_back({element_text(one, 0) == "new", element_text(one, 1),
                       element_text(one, 2)});
    }
  });
  return fresh;
}

reply inbox::call(std::vector<std::string>::const_iterator first,
                  std::vector<std::string>::const_iterator last,
                  const std::string& argument) {
  auto r = script_.run(
      conn_, inbox_script_keys(names_, fence_.active() ? fence_.lock : ""),
      {argument}, first, last);
  if (r->type != REDIS_REPLY_ARRAY ||
      r->elements != static_cast<std::size_t>(last - first))
    unexpected_reply();
  return r;
}

void inbox::apply_call(std::vector<std::string>::const_iterator first,
                       std::vector<std::string>::const_iterator last,
                       const std::string& argument,
                       std::vector<applied_entry>& results) {
  auto r = call(first, last, argument);
  for (std::size_t i = 0; i < r->elements; ++i)
    results.push_back(parse_outcome(*r->element[i]));
}

} // namespace outbox::broker
