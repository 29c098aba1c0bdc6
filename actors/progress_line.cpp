#include "actors/progress_line.hpp"

#include "text/terminal_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

namespace outbox::actors {

namespace {

/// Columns a line takes: one per UTF-8 character (escaped text holds no
/// control characters; wide characters are rare enough in store errors).
std::size_t columns_of(std::string_view line) {
  std::size_t n = 0;
  for (unsigned char c : line)
    if ((c & 0xC0) != 0x80)
      ++n;
  return n;
}

/// `line` cut to at most `limit` columns, "..." marking the cut.
std::string cut_to(const std::string& line, std::size_t limit) {
  if (columns_of(line) <= limit)
    return line;
  std::string_view dots = limit >= 3 ? "..." : "";
  std::size_t keep = limit - dots.size();
  std::size_t bytes = 0;
  for (std::size_t kept = 0; bytes < line.size(); ++bytes) {
    if ((static_cast<unsigned char>(line[bytes]) & 0xC0) != 0x80) {
      if (kept == keep)
        break;
      ++kept;
    }
  }
  return line.substr(0, bytes) + std::string{dots};
}

std::string joined(const std::vector<std::string>& parts) {
  std::string line;
  for (const auto& part : parts) {
    if (part.empty())
      continue;
    if (!line.empty())
      line += " | ";
    line += part;
  }
  return line;
}

std::string rate_text(double per_s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, per_s < 10 ? "%.1f" : "%.0f",
                std::max(per_s, 0.0));
  return std::string{buffer} + " events/s";
}

std::string done_text(const run_progress& p) {
  auto text = p.done_label + " " + std::to_string(p.done);
  if (p.target > 0)
    text += "/" + std::to_string(p.target);
  return text;
}

} // namespace

std::string elapsed_text(std::int64_t ms) {
  char buffer[32];
  auto s = std::max<std::int64_t>(ms, 0) / 1000;
  if (ms < 60'000)
    std::snprintf(buffer, sizeof buffer, "%.1f s",
                  static_cast<double>(std::max<std::int64_t>(ms, 0)) / 1000.0);
  else if (s < 3600)
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds",
                  static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm",
                  static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  return buffer;
}

std::string progress_text(const run_progress& p, std::size_t columns) {
  const auto& s = p.state;
  auto elapsed = elapsed_text(p.elapsed_ms);
  auto done = done_text(p);
  auto rate = rate_text(p.events_per_s);
  auto outbox_full = "outbox pending " + std::to_string(s.pending) +
                     " sending " + std::to_string(s.sending) + " published " +
                     std::to_string(s.published) + " failed " +
                     std::to_string(s.failed);
  auto queue_full = "queue " + std::to_string(s.queued) + " processing " +
                    std::to_string(s.in_processing) + " processed " +
                    std::to_string(s.processed) + " dup " +
                    std::to_string(s.duplicates);
  auto restarts = p.relay_restarts + p.consumer_restarts > 0
                      ? "restarts relay " + std::to_string(p.relay_restarts) +
                            " consumer " + std::to_string(p.consumer_restarts)
                      : std::string{};
  auto outbox_short = "pending " + std::to_string(s.pending) + " sending " +
                      std::to_string(s.sending) + " failed " +
                      std::to_string(s.failed);
  auto queue_short = "queued " + std::to_string(s.queued + s.in_processing) +
                     " processed " + std::to_string(s.processed);
  // Trouble first: a store that does not answer explains everything else.
  std::string why =
      !s.trouble.empty() ? text::escaped(s.trouble) : text::escaped(p.waiting);
  // From the richest form to the leanest; the first that fits is shown.
  std::vector<std::string> forms{
      joined({elapsed, done, rate, outbox_full, queue_full, restarts, why}),
      joined({elapsed, done, rate, outbox_short, queue_short, why}),
      joined({elapsed, done, rate, outbox_short, why}),
      joined({elapsed, done, rate, why}),
      joined({elapsed, done, why}),
      joined({elapsed, why.empty() ? done : why}),
  };
  if (columns == 0)
    return forms.front();
  auto limit = columns > 1 ? columns - 1 : 0;
  for (const auto& form : forms)
    if (columns_of(form) <= limit)
      return form;
  return cut_to(forms.back(), limit);
}

} // namespace outbox::actors
