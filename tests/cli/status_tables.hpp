#pragma once

// Reading the aligned tables `outbox status` prints on a terminal, the way
// a person reads them: blocks between blank lines, cells separated by at
// least two spaces.

#include <cstddef>
#include <string>
#include <vector>

namespace outbox::test {

/// A cell of a line of `outbox status`'s tables: cells are separated by at
/// least two spaces (a cell itself holds single spaces at most).
struct cell {
  std::size_t start = 0;
  std::string text;
  std::size_t end() const { return start + text.size(); }
};

/// The cells of one line.
std::vector<cell> cells_of(const std::string& line);

/// The blocks of lines between blank lines: each table of the output.
std::vector<std::vector<std::string>> tables_of(const std::string& text);

/// The table whose header starts with `title` (empty when there is none).
std::vector<std::string> table_titled(const std::string& text,
                                      const std::string& title);

/// The cells of the row of `table` whose first cell is `key`.
std::vector<std::string> row_of(const std::vector<std::string>& table,
                                const std::string& key);

/// Every column starts where its header starts (left-aligned) or ends where
/// its header ends (right-aligned), on every line of the table.
void expect_aligned(const std::vector<std::string>& table);

} // namespace outbox::test
