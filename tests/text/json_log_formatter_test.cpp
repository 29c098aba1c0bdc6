#include "text/escaping_sink.hpp"
#include "text/json_log_formatter.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <regex>
#include <string>

// log.format "json": each line one JSON object a log shipper can parse,
// whatever the message holds.

namespace {

using outbox::text::json_log_formatter;

TEST(TextJsonLogFormatter, EachLineIsOneObjectWithTimeLevelLoggerAndMessage) {
  auto inner = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(10);
  auto sink = std::make_shared<outbox::text::escaping_sink>(inner);
  sink->set_formatter(std::make_unique<json_log_formatter>());
  spdlog::logger logger{"outbox", sink};
  logger.set_level(spdlog::level::trace);
  logger.warn("consumer {}: dead-lettered an entry (event {}): {}", "c-1",
              "ev\xff\x1b[2J\"", "bad\nline");
  logger.info("plain");
  auto lines = inner->last_formatted();
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines) {
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line: " << line;
  }
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first.at("level"), "warn");
  EXPECT_EQ(first.at("logger"), "outbox");
  EXPECT_EQ(first.at("msg"), "consumer c-1: dead-lettered an entry (event "
                             "ev\\xff\\e[2J\"): bad\\nline");
  EXPECT_TRUE(
      std::regex_match(first.at("ts").get<std::string>(),
                       std::regex{R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"}))
      << first.at("ts");
  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("level"), "info");
}

TEST(TextJsonLogFormatter, ALineOfItsOwnHasTheSameShape) {
  auto line = outbox::text::json_log_line("info", "outbox relay",
                                          "running; SIGTERM stops it");
  EXPECT_EQ(line.back(), '\n');
  auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed.at("logger"), "outbox relay");
  EXPECT_EQ(parsed.at("msg"), "running; SIGTERM stops it");
  EXPECT_EQ(parsed.size(), 4u);
}

} // namespace
