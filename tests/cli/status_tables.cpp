#include "tests/cli/status_tables.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace outbox::test {

std::vector<cell> cells_of(const std::string& line) {
  std::vector<cell> cells;
  std::size_t at = line.find_first_not_of(' ');
  while (at != std::string::npos) {
    auto gap = line.find("  ", at);
    auto end = gap == std::string::npos ? line.size() : gap;
    cells.push_back({at, line.substr(at, end - at)});
    at = gap == std::string::npos ? gap : line.find_first_not_of(' ', gap);
  }
  return cells;
}

std::vector<std::vector<std::string>> tables_of(const std::string& text) {
  std::vector<std::vector<std::string>> tables(1);
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty())
      tables.back().push_back(line);
    else if (!tables.back().empty())
      tables.emplace_back();
  }
  if (tables.back().empty())
    tables.pop_back();
  return tables;
}

std::vector<std::string> table_titled(const std::string& text,
                                      const std::string& title) {
  for (auto& table : tables_of(text))
    if (table.front().rfind(title, 0) == 0)
      return table;
  return {};
}

std::vector<std::string> row_of(const std::vector<std::string>& table,
                                const std::string& key) {
  for (std::size_t i = 1; i < table.size(); ++i) {
    auto cells = cells_of(table[i]);
    if (!cells.empty() && cells[0].text == key) {
      std::vector<std::string> texts;
      for (auto& c : cells)
        texts.push_back(c.text);
      return texts;
    }
  }
  return {};
}

void expect_aligned(const std::vector<std::string>& table) {
  ASSERT_GE(table.size(), 2u) << "a header and at least one row";
  std::string shown;
  for (auto& line : table)
    shown += line + '\n';
  auto header = cells_of(table.front());
  for (auto& line : table)
    ASSERT_EQ(cells_of(line).size(), header.size()) << shown;
  for (std::size_t i = 0; i < header.size(); ++i) {
    bool starts = true;
    bool ends = true;
    for (auto& line : table) {
      auto c = cells_of(line)[i];
      starts = starts && c.start == header[i].start;
      ends = ends && c.end() == header[i].end();
    }
    EXPECT_TRUE(starts || ends) << "column " << header[i].text << ":\n"
                                << shown;
  }
}

} // namespace outbox::test
