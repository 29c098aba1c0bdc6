// The rules an order or event request must follow before any backend
// writes it (and that the schema's CHECKs repeat).

#include "storage/event_ids.hpp"
#include "storage/order_store.hpp"

#include "storage/store_error.hpp"
#include "text/event_headers.hpp"
#include "text/utf8_file.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>

namespace outbox::storage {

namespace {

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

// An SKU is a product code: 1 to 64 printable ASCII characters without spaces
// (0x21 to 0x7e). A space, a control character or a non-ASCII byte in a code
// is far more likely a client bug than intended, so it is rejected.
std::optional<std::string> validate_sku(const std::string& sku) {
  if (sku.empty())
    return "sku must not be empty";
  if (sku.size() > max_sku_length)
    return "sku must be at most " + std::to_string(max_sku_length) +
           " characters (got " + std::to_string(sku.size()) + ")";
  for (std::size_t i = 0; i < sku.size(); ++i) {
    auto c = static_cast<unsigned char>(sku[i]);
    if (c <= 0x20 || c >= 0x7f) {
      std::array<char, 8> hex{};
      std::snprintf(hex.data(), hex.size(), "0x%02x", c);
      return "sku must contain only printable ASCII characters without "
             "spaces (bad byte " +
             std::string{hex.data()} + " at position " + std::to_string(i + 1) +
             ")";
    }
  }
  return std::nullopt;
}

// A request id is opaque to us (UUIDs, client tokens, UTF-8 text): any bytes
// but control characters, 1 to 128 of them.
std::optional<std::string> validate_request_id(const std::string& id) {
  if (id.empty() || id.size() > max_request_id_length)
    return "request_id must be 1 to " + std::to_string(max_request_id_length) +
           " bytes long (got " + std::to_string(id.size()) + ")";
  for (std::size_t i = 0; i < id.size(); ++i)
    if (is_control(static_cast<unsigned char>(id[i])))
      return "request_id must not contain control characters (at position " +
             std::to_string(i + 1) + ")";
  return std::nullopt;
}

template <class Request>
void require_each_valid(const std::vector<Request>& requests,
                        const char* noun) {
  for (std::size_t i = 0; i < requests.size(); ++i)
    if (auto problem = validate(requests[i]))
      throw store_error(store_errc::invalid_input,
                        requests.size() == 1
                            ? *problem
                            : std::string{noun} + " " + std::to_string(i + 1) +
                                  ": " + *problem);
}

/// The largest integer a consumer reads exactly (its Lua numbers are
/// doubles).
constexpr double max_exact_integer = 9007199254740992.0;

/// Why the consumer would refuse an OrderPlaced with this payload (its
/// inbox checks, word for word: broker/lua/inbox_entry.lua), so that it is
/// refused where it is written instead of dead-lettered later; else
/// nothing.
std::optional<std::string> order_placed_problem(const nlohmann::json& payload) {
  auto sku = payload.find("sku");
  if (sku == payload.end() || !sku->is_string() ||
      sku->get_ref<const std::string&>().empty())
    return "payload.sku must be a non-empty string";
  for (unsigned char c : sku->get_ref<const std::string&>())
    if (is_control(c))
      return "payload.sku must be UTF-8 text without control characters";
  auto qty = payload.find("qty");
  auto q = qty != payload.end() && qty->is_number() ? qty->get<double>() : 0;
  if (!(q >= 1 && q <= max_exact_integer) || std::floor(q) != q)
    return "payload.qty must be an integer >= 1 (at most 2^53)";
  return std::nullopt;
}

/// Ids and type names end up as hash fields, in log lines and on
/// terminals: the consumers refuse control characters in them
/// (broker/queue_entry.schema.json's clean_text), so the writer does too.
std::optional<std::string> clean_text_problem(const std::string& text,
                                              const char* field) {
  if (text.empty())
    return std::string{field} + " must not be empty";
  const auto problem =
      std::string{field} + " must be UTF-8 text without control characters";
  // The relay writes it into a JSON entry, which cannot hold other bytes.
  if (!text::is_utf8(text))
    return problem + " (got bytes that are not UTF-8)";
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    // C0, DEL, and C1 (U+0080..U+009F: 0xC2 0x80..0x9F in UTF-8).
    if (is_control(c) || (c == 0xC2 && i + 1 < text.size() &&
                          static_cast<unsigned char>(text[i + 1]) < 0xA0))
      return problem;
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> validate(const event_request& request) {
  if (auto problem = clean_text_problem(request.aggregate_id, "aggregate_id"))
    return problem;
  if (auto problem = clean_text_problem(request.event_type, "event_type"))
    return problem;
  auto payload = nlohmann::json::parse(request.payload, nullptr, false);
  if (payload.is_discarded())
    return "payload must be a JSON object (got text that is not valid JSON)";
  if (!payload.is_object())
    return std::string{"payload must be a JSON object (got a JSON "} +
           payload.type_name() + ")";
  if (request.event_type == "OrderPlaced")
    if (auto problem = order_placed_problem(payload))
      return "an OrderPlaced the consumers would refuse: " + *problem;
  if (!request.event_id.empty() && !is_event_id(request.event_id))
    return "event_id must be a UUID (8-4-4-4-12 hex digits), not \"" +
           request.event_id + "\"";
  return text::headers_text_problem(request.headers);
}

// qty is the last field and only digits, so the text is unambiguous even
// for an sku containing ';' or '='.
std::string request_fingerprint(const order_request& request) {
  return "sku=" + request.sku + ";qty=" + std::to_string(request.qty);
}

std::optional<std::string> validate(const order_request& request) {
  if (auto problem = validate_sku(request.sku))
    return problem;
  if (request.qty < 1 || request.qty > max_qty)
    return "qty must be a positive integer no larger than " +
           std::to_string(max_qty) + " (got " + std::to_string(request.qty) +
           ")";
  if (request.request_id)
    if (auto problem = validate_request_id(*request.request_id))
      return problem;
  return text::headers_text_problem(request.headers);
}

std::string order_aggregate_id(std::int64_t order_id) {
  return "order-" + std::to_string(order_id);
}

void require_valid(const std::vector<order_request>& requests) {
  require_each_valid(requests, "order request");
}

void require_valid(const std::vector<event_request>& requests) {
  require_each_valid(requests, "event request");
}

} // namespace outbox::storage
