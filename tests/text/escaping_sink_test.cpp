#include "text/escaping_sink.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

// The process's logger escapes every message, whoever logged it.

namespace {

TEST(TextEscapingSink, LogLinesCarryNoRawControlsOrBadBytes) {
  auto inner = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(10);
  inner->set_pattern("%l %v");
  spdlog::logger logger{"escaping-sink-test",
                        std::make_shared<outbox::text::escaping_sink>(inner)};
  logger.warn("consumer {}: dead-lettered an entry (event {}): {}", "c-1",
              "ev\xff\x1b[2J", "bad\nline");
  auto lines = inner->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "warning consumer c-1: dead-lettered an entry (event "
                      "ev\\xff\\e[2J): bad\\nline\n");
}

} // namespace
