#include "broker/entry_head.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>

namespace outbox::broker {

namespace {

using json = nlohmann::json;

/// Reads the entry's top-level ids while parsing, without building a
/// document: a dead-lettered entry may be cut short, malformed or deeply
/// nested, and whatever came before the trouble is still worth showing.
class head_reader : public json::json_sax_t {
public:
  std::optional<std::string>& event_id;
  std::optional<std::string>& aggregate_id;
  std::optional<std::string>& event_type;
  std::optional<std::int64_t>& seq;
  std::optional<std::string>& traceparent;

  explicit head_reader(entry_head& head)
      : event_id(head.event_id), aggregate_id(head.aggregate_id),
        event_type(head.event_type), seq(head.seq),
        traceparent(head.traceparent) {}

  bool key(string_t& name) override {
    field_ = depth_ == 1 || (depth_ == 2 && in_headers_) ? name : std::string{};
    return true;
  }
  bool string(string_t& value) override {
    if (in_headers_) {
      if (depth_ == 2 && field_ == "traceparent")
        keep(traceparent, value);
    } else if (field_ == "event_id")
      keep(event_id, value);
    else if (field_ == "aggregate_id")
      keep(aggregate_id, value);
    else if (field_ == "event_type")
      keep(event_type, value);
    return scalar();
  }
  bool number_integer(number_integer_t value) override {
    if (top_level_seq())
      seq = value;
    return scalar();
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (top_level_seq() && value <= static_cast<number_unsigned_t>(INT64_MAX))
      seq = static_cast<std::int64_t>(value);
    return scalar();
  }
  bool start_object(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_float(number_float_t value, const string_t&) override {
    // cjson and the inbox take an integral 2.0 for 2.
    if (top_level_seq() && std::floor(value) == value && value >= -9.0e15 &&
        value <= 9.0e15)
      seq = static_cast<std::int64_t>(value);
    return scalar();
  }
  bool binary(binary_t&) override { return scalar(); }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception&) override {
    return false;
  }

private:
  /// A header named seq is not the entry's.
  bool top_level_seq() const { return field_ == "seq" && !in_headers_ && !seq; }
  /// The first occurrence counts, as for nlohmann's and cjson's decoders.
  static void keep(std::optional<std::string>& field, const std::string& v) {
    if (!field)
      field = v;
  }
  bool open() {
    // The headers object of the top level: its traceparent is read too.
    if (depth_ == 1 && field_ == "headers" && !headers_seen_)
      in_headers_ = headers_seen_ = true;
    ++depth_;
    field_.clear();
    return true;
  }
  bool close() {
    if (--depth_ == 1)
      in_headers_ = false;
    field_.clear();
    return true;
  }
  bool scalar() {
    field_.clear();
    return true;
  }

  int depth_ = 0;
  std::string field_;
  /// Inside the top level's (first) headers object.
  bool in_headers_ = false;
  bool headers_seen_ = false;
};

} // namespace

entry_head read_entry_head(const std::string& text) {
  entry_head head;
  head_reader reader{head};
  json::sax_parse(text, &reader, json::input_format_t::json, false);
  return head;
}

} // namespace outbox::broker
