#include "storage/trace_context.hpp"

#include "storage/event_ids.hpp"
#include "text/event_headers.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>

namespace outbox::storage {

namespace {

/// A random 64-bit value that is not 0 (W3C: an all-zero id is invalid).
std::uint64_t nonzero(std::mt19937_64& rng) {
  std::uint64_t value = 0;
  while (value == 0)
    value = rng();
  return value;
}

} // namespace

trace_source::trace_source() : rng_(seeded_rng()) {}

std::string trace_source::new_traceparent() {
  auto trace_hi = rng_();
  auto trace_lo = nonzero(rng_);
  auto span = nonzero(rng_);
  std::array<char, 56> text{};
  std::snprintf(text.data(), text.size(), "00-%016llx%016llx-%016llx-01",
                static_cast<unsigned long long>(trace_hi),
                static_cast<unsigned long long>(trace_lo),
                static_cast<unsigned long long>(span));
  return std::string{text.data()};
}

std::string trace_source::child_traceparent(const std::string& trace_id) {
  std::array<char, 20> span{};
  std::snprintf(span.data(), span.size(), "%016llx",
                static_cast<unsigned long long>(nonzero(rng_)));
  return "00-" + trace_id + "-" + span.data() + "-01";
}

std::string trace_source::with_traceparent(const std::string& headers) {
  if (headers.empty())
    return R"({"traceparent":")" + new_traceparent() + "\"}";
  auto object = nlohmann::json::parse(headers);
  if (object.contains(text::traceparent_header))
    return headers;
  object[text::traceparent_header] = new_traceparent();
  return object.dump();
}

} // namespace outbox::storage
