#include "text/terminal_text.hpp"

#include <gtest/gtest.h>

#include <string>

// What a terminal is shown of text from outside: everything it would act on
// or could not display, written out; the rest as it is.

using outbox::text::escaped;
using outbox::text::utf8_cut;

namespace {

TEST(TextTerminal, PrintableAsciiAndUtf8AreKept) {
  EXPECT_EQ(escaped(""), "");
  EXPECT_EQ(escaped("order-42 apple ~!"), "order-42 apple ~!");
  EXPECT_EQ(escaped("cr\xc3\xa8me \xe2\x82\xac \xf0\x9f\x8d\x8e"),
            "cr\xc3\xa8me \xe2\x82\xac \xf0\x9f\x8d\x8e");
  EXPECT_EQ(escaped("C:\\path\\e"), "C:\\path\\e");
}

TEST(TextTerminal, ControlCharactersAreWrittenOut) {
  EXPECT_EQ(escaped("ev\x1b[2J"), "ev\\e[2J");
  EXPECT_EQ(escaped("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(escaped(std::string{"nul\0bel\x07", 8}), "nul\\x00bel\\x07");
  EXPECT_EQ(escaped("\x1f\x7f"), "\\x1f\\x7f");
  // C1 controls, as UTF-8: CSI and NEL.
  EXPECT_EQ(escaped("\xc2\x9b"
                    "31m \xc2\x85"),
            "\\u009b31m \\u0085");
  // U+00A0, just past C1, is text.
  EXPECT_EQ(escaped("\xc2\xa0"), "\xc2\xa0");
}

TEST(TextTerminal, BytesThatAreNotUtf8AreWrittenOutOneByOne) {
  EXPECT_EQ(escaped("ev\xff\x1b[2J"), "ev\\xff\\e[2J");
  EXPECT_EQ(escaped("\x80 stray"), "\\x80 stray");
  EXPECT_EQ(escaped("\xc3"), "\\xc3");                   // cut short
  EXPECT_EQ(escaped("\xe2\x82"), "\\xe2\\x82");          // cut short
  EXPECT_EQ(escaped("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(escaped("\xe0\x80\xaf"), "\\xe0\\x80\\xaf"); // overlong
  EXPECT_EQ(escaped("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
  EXPECT_EQ(escaped("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // > U+10FFFF
  EXPECT_EQ(escaped("\xc3x"), "\\xc3x");
}

TEST(TextTerminal, EscapingTwiceChangesNothingMore) {
  for (std::string text : {"ev\xff\x1b[2J", "a\nb", "\xc2\x9b", "plain"}) {
    auto once = escaped(text);
    EXPECT_EQ(escaped(once), once) << once;
  }
}

TEST(TextTerminal, EveryByteComesOutVisible) {
  std::string all;
  for (int byte = 0; byte < 256; ++byte)
    all += static_cast<char>(byte);
  auto shown = escaped(all);
  for (unsigned char c : shown)
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
}

TEST(TextTerminal, CutsFallBetweenCharacters) {
  std::string text = "ab\xc3\xa8z"; // a b è z
  EXPECT_EQ(utf8_cut(text, 10), text.size());
  EXPECT_EQ(utf8_cut(text, 2), 2u);
  EXPECT_EQ(utf8_cut(text, 3), 2u); // inside è: before it
  EXPECT_EQ(utf8_cut(text, 4), 4u);
  EXPECT_EQ(utf8_cut("\xff\xff", 1), 1u);
}

} // namespace
