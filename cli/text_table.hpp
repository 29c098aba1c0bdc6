#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace outbox::cli {

/// A plain-text table for a terminal, in the style of `kubectl get` and psql:
/// a header row, then one line per row, each column padded to its widest
/// cell and two spaces from the next. Numbers are right-aligned so that
/// their digits line up; everything else is left-aligned.
class text_table {
public:
  explicit text_table(std::vector<std::string> headers);

  /// Right-aligns `column` whatever its cells hold: for values that are not
  /// plain numbers but still compare by their last digits, such as ages.
  text_table& align_right(std::size_t column);

  /// Appends a row. Missing cells are blank; more cells than headers is a
  /// programming error (std::invalid_argument). Line breaks and tabs in a
  /// cell become spaces: a row must stay one line to stay aligned; other
  /// control characters and bytes that are not UTF-8 are escaped (see
  /// text::escaped()).
  text_table& add_row(std::vector<std::string> cells);

  bool empty() const { return rows_.empty(); }

  /// The header and the rows, every line ending in '\n', none with trailing
  /// blanks. A column is right-aligned when align_right() named it, or when
  /// it has a number and every other cell in it is blank.
  std::string render() const;

private:
  bool right_aligned(std::size_t column) const;

  std::vector<std::string> headers_;
  std::vector<bool> forced_right_;
  std::vector<std::vector<std::string>> rows_;
};

/// True for an optional minus sign, digits, and an optional fraction.
bool is_number(const std::string& text);

/// `text` on one line and at most `width` characters, ending in "..." when
/// cut: keeps a long error message from stretching a whole table.
std::string fit(const std::string& text, std::size_t width);

/// The same, cut in the middle instead: its start and, in two thirds of
/// the width, its end, where an error message says why ("relay r1: ...:
/// entry of 2000000 bytes over broker.max_entry_bytes").
std::string fit_keeping_end(const std::string& text, std::size_t width);

/// Characters `text` takes on a terminal: UTF-8 code points, so that an
/// error message with accents does not shift its column.
std::size_t display_width(const std::string& text);

} // namespace outbox::cli
