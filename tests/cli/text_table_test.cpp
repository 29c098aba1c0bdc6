#include "cli/text_table.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace outbox::cli {
namespace {

TEST(CliTextTable, PadsColumnsToTheWidestCellAndRightAlignsNumbers) {
  text_table table{{"QUEUE", "QUEUED", "OWNER"}};
  table.add_row({"outbox.events.0", "12", "relay-a"});
  table.add_row({"q", "1234567", "r"});
  EXPECT_EQ(table.render(), "QUEUE             QUEUED  OWNER\n"
                            "outbox.events.0       12  relay-a\n"
                            "q                1234567  r\n");
}

TEST(CliTextTable, HeaderWiderThanItsCellsSetsTheWidth) {
  text_table table{{"STATUS", "ROWS"}};
  table.add_row({"FAILED", "1"});
  EXPECT_EQ(table.render(), "STATUS  ROWS\n"
                            "FAILED     1\n");
}

TEST(CliTextTable, AColumnWithOneNonNumberStaysLeftAligned) {
  text_table table{{"A", "VALUE"}};
  table.add_row({"x", "1"});
  table.add_row({"y", "n/a"});
  EXPECT_EQ(table.render(), "A  VALUE\n"
                            "x  1\n"
                            "y  n/a\n");
}

TEST(CliTextTable, BlankCellsDoNotStopANumberColumnFromAligningRight) {
  text_table table{{"QUEUE", "QUEUED", "PROCESSING"}};
  table.add_row({"a", "", "3"});
  table.add_row({"b", "10", "0"});
  EXPECT_EQ(table.render(), "QUEUE  QUEUED  PROCESSING\n"
                            "a                       3\n"
                            "b          10           0\n");
}

TEST(CliTextTable, AlignRightForcesAColumnOfAges) {
  text_table table{{"ORDERS", "OLDEST"}};
  table.align_right(1).add_row({"4", "3.2s"});
  EXPECT_EQ(table.render(), "ORDERS  OLDEST\n"
                            "     4    3.2s\n");
}

TEST(CliTextTable, NoTrailingBlanksAndMissingCellsAreBlank) {
  text_table table{{"OWNER", "NOTE"}};
  table.add_row({"relay-long-name"});
  table.add_row({"r", "x"});
  EXPECT_EQ(table.render(), "OWNER            NOTE\n"
                            "relay-long-name\n"
                            "r                x\n");
}

TEST(CliTextTable, ARowWithMoreCellsThanHeadersIsRefused) {
  text_table table{{"A"}};
  EXPECT_THROW(table.add_row({"1", "2"}), std::invalid_argument);
}

TEST(CliTextTable, LineBreaksInACellKeepTheRowOnOneLine) {
  text_table table{{"ERROR", "N"}};
  table.add_row({"first\nsecond\tthird", "1"});
  EXPECT_EQ(table.render(), "ERROR               N\n"
                            "first second third  1\n");
}

TEST(CliTextTable, ControlCharactersInACellAreEscaped) {
  text_table table{{"ID", "N"}};
  table.add_row({"e-\x1b[2J\x07\x7f \xc2\x9b"
                 "1m cr\xc3\xa8me \xff",
                 "1"});
  EXPECT_EQ(table.render(),
            "ID                                   N\n"
            "e-\\e[2J\\x07\\x7f \\u009b1m cr\xc3\xa8me \\xff  1\n");
}

TEST(CliTextTable, WidthsCountCharactersNotBytes) {
  text_table table{{"SKU", "N"}};
  table.add_row({"crème", "1"});
  table.add_row({"pears", "2"});
  EXPECT_EQ(table.render(), "SKU    N\n"
                            "crème  1\n"
                            "pears  2\n");
}

TEST(CliTextTable, RecognisesNumbers) {
  for (const auto* number : {"0", "42", "-7", "3.25", "-0.5"})
    EXPECT_TRUE(is_number(number)) << number;
  for (const auto* other : {"", "-", "1.", ".5", "3s", "1e5", "1,000", "in 2"})
    EXPECT_FALSE(is_number(other)) << other;
}

TEST(CliTextTable, FitCutsLongTextWithAnEllipsis) {
  EXPECT_EQ(fit("short", 10), "short");
  EXPECT_EQ(fit("exactly10!", 10), "exactly10!");
  EXPECT_EQ(fit("broker refused the batch", 10), "broker ...");
  EXPECT_EQ(fit("two\nlines", 20), "two lines");
  EXPECT_EQ(fit("abcdef", 2), "ab");
  // Never cuts inside a UTF-8 character.
  EXPECT_EQ(fit("ééééééé", 5), "éé...");
  EXPECT_EQ(display_width(fit("ééééééé", 5)), 5u);
}

} // namespace
} // namespace outbox::cli
