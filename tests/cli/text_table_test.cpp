#include "cli/text_table.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::cli {
namespace {

/// A table of plain rows and what it must render to.
struct render_case {
  const char* name;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::string rendered;
};

const std::vector<render_case> render_cases = {
    {"PadsColumnsToTheWidestCellAndRightAlignsNumbers",
     {"QUEUE", "QUEUED", "OWNER"},
     {{"outbox.events.0", "12", "relay-a"}, {"q", "1234567", "r"}},
     "QUEUE             QUEUED  OWNER\n"
     "outbox.events.0       12  relay-a\n"
     "q                1234567  r\n"},
    {"HeaderWiderThanItsCellsSetsTheWidth",
     {"STATUS", "ROWS"},
     {{"FAILED", "1"}},
     "STATUS  ROWS\n"
     "FAILED     1\n"},
    {"AColumnWithOneNonNumberStaysLeftAligned",
     {"A", "VALUE"},
     {{"x", "1"}, {"y", "n/a"}},
     "A  VALUE\n"
     "x  1\n"
     "y  n/a\n"},
    {"BlankCellsDoNotStopANumberColumnFromAligningRight",
     {"QUEUE", "QUEUED", "PROCESSING"},
     {{"a", "", "3"}, {"b", "10", "0"}},
     "QUEUE  QUEUED  PROCESSING\n"
     "a                       3\n"
     "b          10           0\n"},
    {"NoTrailingBlanksAndMissingCellsAreBlank",
     {"OWNER", "NOTE"},
     {{"relay-long-name"}, {"r", "x"}},
     "OWNER            NOTE\n"
     "relay-long-name\n"
     "r                x\n"},
    {"LineBreaksInACellKeepTheRowOnOneLine",
     {"ERROR", "N"},
     {{"first\nsecond\tthird", "1"}},
     "ERROR               N\n"
     "first second third  1\n"},
    {"ControlCharactersInACellAreEscaped",
     {"ID", "N"},
     {{"e-\x1b[2J\x07\x7f \xc2\x9b"
       "1m cr\xc3\xa8me \xff",
       "1"}},
     "ID                                   N\n"
     "e-\\e[2J\\x07\\x7f \\u009b1m cr\xc3\xa8me \\xff  1\n"},
    {"WidthsCountCharactersNotBytes",
     {"SKU", "N"},
     {{"crème", "1"}, {"pears", "2"}},
     "SKU    N\n"
     "crème  1\n"
     "pears  2\n"},
};

class CliTextTableRender : public ::testing::TestWithParam<render_case> {};

TEST_P(CliTextTableRender, Renders) {
  const auto& c = GetParam();
  text_table table{c.headers};
  for (const auto& row : c.rows)
    table.add_row(row);
  EXPECT_EQ(table.render(), c.rendered);
}

INSTANTIATE_TEST_SUITE_P(CliTextTable, CliTextTableRender,
                         ::testing::ValuesIn(render_cases),
                         [](const ::testing::TestParamInfo<render_case>& info) {
                           return std::string{info.param.name};
                         });

TEST(CliTextTable, AlignRightForcesAColumnOfAges) {
  text_table table{{"ORDERS", "OLDEST"}};
  table.align_right(1).add_row({"4", "3.2s"});
  EXPECT_EQ(table.render(), "ORDERS  OLDEST\n"
                            "     4    3.2s\n");
}

TEST(CliTextTable, ARowWithMoreCellsThanHeadersIsRefused) {
  text_table table{{"A"}};
  EXPECT_THROW(table.add_row({"1", "2"}), std::invalid_argument);
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

TEST(CliTextTable, FitKeepingEndShowsWhyALongErrorFailed) {
  const std::string error =
      "relay vm-1-0: publish of 1 rows refused by the broker: entry of "
      "2000000 bytes over broker.max_entry_bytes (1048576)";
  auto shown = fit_keeping_end(error, 60);
  EXPECT_EQ(display_width(shown), 60u);
  EXPECT_EQ(shown.rfind("relay vm-1-0: pu", 0), 0u) << shown;
  // The end, with the cause, comes whole.
  const std::string cause = "over broker.max_entry_bytes (1048576)";
  EXPECT_EQ(shown.substr(shown.size() - cause.size()), cause) << shown;
  EXPECT_NE(shown.find("..."), std::string::npos) << shown;
  EXPECT_EQ(fit_keeping_end("short", 60), "short");
  // Never cuts inside a UTF-8 character, at either end.
  auto accents = fit_keeping_end(std::string(30, 'a') + "éééééééééé", 15);
  EXPECT_EQ(display_width(accents), 15u);
  EXPECT_EQ(accents, "aaaa...éééééééé");
}

} // namespace
} // namespace outbox::cli
