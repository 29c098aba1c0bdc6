#pragma once

// An event's headers: a free-form map of names to string values stored
// with its outbox row and carried in its queue entry (`headers`), for
// metadata that is not the event's data: W3C trace context (`traceparent`,
// `tracestate`), a tenant, a correlation or causation id. Kept as the text
// of a JSON object, as the payload is: the relay copies it from the row to
// the entry without looking inside.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace outbox::text {

inline constexpr std::size_t max_headers = 64;
inline constexpr std::size_t max_header_name_bytes = 128;
inline constexpr std::size_t max_header_value_bytes = 4096;

/// The W3C trace context header (https://www.w3.org/TR/trace-context/).
inline constexpr const char* traceparent_header = "traceparent";

/// Why `headers` may not be an event's headers, or nothing: a JSON object
/// of at most max_headers names (counting the traceparent a writer adds
/// when none is given), each 1 to max_header_name_bytes bytes of
/// UTF-8 without control characters, each value a string of at most
/// max_header_value_bytes bytes; a `traceparent`, when there, in the W3C
/// form version-traceid-parentid-flags. Writers check this; consumers
/// check only the shape (an object of strings: entry.cpp).
std::optional<std::string> headers_problem(const nlohmann::json& headers);

/// The same for a map of headers (empty: fine).
std::optional<std::string>
headers_problem(const std::map<std::string, std::string>& headers);

/// The same for the text of headers ("" is none: fine).
std::optional<std::string> headers_text_problem(std::string_view text);

/// True for a W3C traceparent of version 00: 00-<32 hex>-<16 hex>-<2 hex>,
/// lower case, the trace and parent ids not all zeros.
bool is_traceparent(std::string_view value);

/// The trace id of a traceparent (32 hex digits), or nothing when it is not
/// one is_traceparent() accepts.
std::optional<std::string> trace_id_from(std::string_view traceparent);

/// The trace id of the headers' traceparent (32 hex digits), or nothing
/// (no headers, none there, or not one this reads). For log lines: it
/// never throws.
std::optional<std::string> trace_id_of(std::string_view headers_text);

/// " trace <id>" for a log line about an event with these headers, or ""
/// when they name no trace.
std::string trace_suffix(std::string_view headers_text);

/// The text of a map of headers (names sorted): "" for none. Throws
/// nlohmann::json::type_error for text that is not UTF-8: check
/// headers_problem() first.
std::string headers_text(const std::map<std::string, std::string>& headers);

} // namespace outbox::text
