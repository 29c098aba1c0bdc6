#include "text/json_text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

// JSON written out never throws on text that is not UTF-8, and parses
// back with a strict parser.

using outbox::text::json_text;

namespace {

TEST(TextJson, BytesThatAreNotUtf8AreReplacedNotThrown) {
  nlohmann::json value{{"event_id", "ev\xff\x1b[2J"}};
  EXPECT_THROW(value.dump(), nlohmann::json::type_error);
  auto text = json_text(value);
  auto back = nlohmann::json::parse(text);
  EXPECT_EQ(back.at("event_id"), "ev\xef\xbf\xbd\x1b[2J");
}

TEST(TextJson, OutputIsPlainAsciiWithControlsEscaped) {
  nlohmann::ordered_json value{{"id", "e\x1b\x7f\xc2\x9b cr\xc3\xa8me"}};
  auto text = json_text(value);
  EXPECT_EQ(text, R"({"id":"e\u001b\u007f\u009b cr\u00e8me"})");
  EXPECT_EQ(nlohmann::json::parse(text).at("id"),
            "e\x1b\x7f\xc2\x9b cr\xc3\xa8me");
}

TEST(TextJson, IndentsLikeDump) {
  nlohmann::json value{{"a", 1}};
  EXPECT_EQ(json_text(value, 2), value.dump(2));
}

} // namespace
