#include "cli/text_table.hpp"

#include "text/terminal_text.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace outbox::cli {

namespace {

/// Columns are this many spaces apart.
constexpr std::size_t gap = 2;

std::string one_line(std::string text) {
  std::replace_if(
      text.begin(), text.end(),
      [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return text::escaped(text);
}

bool is_continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

} // namespace

text_table::text_table(std::vector<std::string> headers)
    : headers_(std::move(headers)), forced_right_(headers_.size(), false) {
  for (auto& header : headers_)
    header = one_line(std::move(header));
}

text_table& text_table::align_right(std::size_t column) {
  forced_right_.at(column) = true;
  return *this;
}

text_table& text_table::add_row(std::vector<std::string> cells) {
  if (cells.size() > headers_.size())
    throw std::invalid_argument("text_table: row has more cells than headers");
  cells.resize(headers_.size());
  for (auto& cell : cells)
    cell = one_line(std::move(cell));
  rows_.push_back(std::move(cells));
  return *this;
}

bool text_table::right_aligned(std::size_t column) const {
  if (forced_right_[column])
    return true;
  bool any_number = false;
  for (const auto& row : rows_) {
    if (row[column].empty())
      continue;
    if (!is_number(row[column]))
      return false;
    any_number = true;
  }
  return any_number;
}

std::string text_table::render() const {
  std::vector<std::size_t> widths;
  std::vector<bool> right;
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    auto width = display_width(headers_[i]);
    for (const auto& row : rows_)
      width = std::max(width, display_width(row[i]));
    widths.push_back(width);
    right.push_back(right_aligned(i));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0)
        text.append(gap, ' ');
      auto padding = std::string(widths[i] - display_width(cells[i]), ' ');
      text += right[i] ? padding + cells[i] : cells[i] + padding;
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text;
    out += '\n';
  };
  line(headers_);
  for (const auto& row : rows_)
    line(row);
  return out;
}

bool is_number(const std::string& text) {
  std::size_t at = text.size() > 1 && text[0] == '-' ? 1 : 0;
  auto digits = [&] {
    auto start = at;
    while (at < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[at])) != 0)
      ++at;
    return at > start;
  };
  if (!digits())
    return false;
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (!digits())
      return false;
  }
  return at == text.size();
}

std::string fit(const std::string& text, std::size_t width) {
  auto flat = one_line(text);
  if (display_width(flat) <= width)
    return flat;
  const std::string ellipsis = width > 3 ? "..." : "";
  auto keep = width - ellipsis.size();
  // Cut after `keep` code points, never inside one.
  std::size_t at = 0;
  for (std::size_t points = 0; at < flat.size(); ++at) {
    if (!is_continuation_byte(flat[at]) && points++ == keep)
      break;
  }
  return flat.substr(0, at) + ellipsis;
}

std::string fit_keeping_end(const std::string& text, std::size_t width) {
  auto flat = one_line(text);
  auto points = display_width(flat);
  if (points <= width || width < 12)
    return fit(flat, width);
  // A third for the start (what failed), the rest for the end (why).
  auto head = (width - 3) / 3;
  auto tail = width - 3 - head;
  auto byte_of = [&flat](std::size_t point) {
    std::size_t at = 0;
    for (std::size_t seen = 0; at < flat.size(); ++at)
      if (!is_continuation_byte(flat[at]) && seen++ == point)
        break;
    return at;
  };
  return flat.substr(0, byte_of(head)) + "..." +
         flat.substr(byte_of(points - tail));
}

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(),
                    [](char c) { return !is_continuation_byte(c); }));
}

} // namespace outbox::cli
