#include "text/event_headers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace outbox::text;

namespace {

const std::string w3c_example =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

} // namespace

TEST(TextEventHeaders, TraceparentIsTheW3CVersion00Form) {
  EXPECT_TRUE(is_traceparent(w3c_example));
  EXPECT_TRUE(is_traceparent(
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
  for (const auto* bad :
       {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"})
    EXPECT_FALSE(is_traceparent(bad)) << bad;
}

TEST(TextEventHeaders, TheTraceIdIsReadFromTheHeadersText) {
  EXPECT_EQ(
      "4bf92f3577b34da6a3ce929d0e0e4736",
      trace_id_of(R"({"tenant":"a","traceparent":")" + w3c_example + "\"}"));
  EXPECT_EQ(" trace 4bf92f3577b34da6a3ce929d0e0e4736",
            trace_suffix(R"({"traceparent":")" + w3c_example + "\"}"));
  // Never a throw, only nothing: these are for log lines.
  for (const auto* none : {"", "{}", "not json", "[1]", R"({"traceparent":7})",
                           R"({"traceparent":"00-x-y-01"})"}) {
    EXPECT_FALSE(trace_id_of(none)) << none;
    EXPECT_EQ("", trace_suffix(none)) << none;
  }
}

TEST(TextEventHeaders, ProblemsNameTheHeaderAndTheRule) {
  using map = std::map<std::string, std::string>;
  EXPECT_FALSE(headers_problem(map{}));
  EXPECT_FALSE(headers_problem(map{{"traceparent", w3c_example},
                                   {"tenant", "acme"},
                                   {"note", "UTF-8 \xc3\xa9 and\ttabs"}}));
  EXPECT_EQ("header names must be UTF-8 text without control characters",
            headers_problem(map{{"a\nb", "x"}}));
  EXPECT_EQ("header names must be UTF-8 text without control characters",
            headers_problem(map{{"a\xff", "x"}}));
  EXPECT_EQ("header note must be UTF-8 text",
            headers_problem(map{{"note", "\xff"}}));
  EXPECT_EQ("a header name must be 1 to 128 bytes (got 129)",
            headers_problem(map{{std::string(129, 'n'), "x"}}));
  EXPECT_FALSE(headers_problem(map{{std::string(128, 'n'), "x"}}));
  EXPECT_FALSE(headers_problem(map{{"v", std::string(4096, 'x')}}));
  EXPECT_TRUE(headers_problem(map{{"v", std::string(4097, 'x')}}));
  EXPECT_FALSE(headers_text_problem(""));
  EXPECT_EQ("headers must be a JSON object (got text that is not valid JSON)",
            headers_text_problem("{"));
  EXPECT_EQ("headers must be a JSON object (got a JSON string)",
            headers_text_problem("\"x\""));
}

TEST(TextEventHeaders, TheTextOfAMapSortsItsNames) {
  EXPECT_EQ("", headers_text({}));
  EXPECT_EQ(R"({"a":"1","b":"2"})", headers_text({{"b", "2"}, {"a", "1"}}));
  EXPECT_FALSE(headers_text_problem(headers_text({{"tenant", "acme"}})));
}
