#include "sink/sql_effects.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace outbox::sink {

namespace {

/// A header line: `-- effect: <type>`; the type, or "" when `line` is not
/// one.
std::string section_type(const std::string& line) {
  static const std::string mark = "-- effect:";
  if (line.rfind(mark, 0) != 0)
    return {};
  auto first = line.find_first_not_of(" \t", mark.size());
  auto last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos || last < first)
    return {};
  return line.substr(first, last - first + 1);
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// Whether `name` is a value an event gives (sql_effects.hpp).
bool known_parameter(const std::string& name) {
  for (const char* whole :
       {"event_id", "aggregate_id", "seq", "event_type", "payload", "headers"})
    if (name == whole)
      return true;
  for (const char* prefix : {"payload.", "headers."})
    if (name.rfind(prefix, 0) == 0 && name.size() > std::strlen(prefix))
      return true;
  return false;
}

/// Splits one section's text into statements and numbers their
/// parameters. `first_line` is the file's line the text starts on.
class statement_scanner {
public:
  statement_scanner(const std::string& text, int first_line,
                    const std::string& file)
      : text_(text), line_(first_line), file_(file) {}

  std::vector<sql_statement> scan() {
    while (at_ < text_.size()) {
      char c = text_[at_];
      if (c == '\n') {
        ++line_;
        take(1);
      } else if (c == '\'' || c == '"') {
        quoted(c);
      } else if (c == '-' && next_is('-')) {
        line_comment();
      } else if (c == '/' && next_is('*')) {
        block_comment();
      } else if (c == '$' && dollar_quote()) {
        // Consumed by dollar_quote().
      } else if (c == ':' && next_is(':')) {
        take(2);
      } else if (c == ':' && at_ + 1 < text_.size() &&
                 (std::isalpha(static_cast<unsigned char>(text_[at_ + 1])) !=
                      0 ||
                  text_[at_ + 1] == '_')) {
        parameter();
      } else if (c == ';') {
        finish();
        ++at_;
      } else {
        if (std::isspace(static_cast<unsigned char>(c)) == 0)
          mark_start();
        take(1);
      }
    }
    finish();
    return std::move(statements_);
  }

private:
  bool next_is(char c) const {
    return at_ + 1 < text_.size() && text_[at_ + 1] == c;
  }

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw sql_effects_error(file_ + ":" + std::to_string(line) + ": " + why);
  }

  void mark_start() {
    if (!started_) {
      started_ = true;
      current_.line = line_;
    }
  }

  /// Copies `n` characters to both texts.
  void take(std::size_t n) {
    auto piece = text_.substr(at_, n);
    current_.postgres += piece;
    current_.sqlite += piece;
    at_ += n;
  }

  void quoted(char quote) {
    mark_start();
    int opened = line_;
    take(1);
    while (true) {
      if (at_ >= text_.size())
        fail(opened, std::string{"unterminated "} +
                         (quote == '\'' ? "string" : "quoted identifier"));
      char c = text_[at_];
      if (c == '\n')
        ++line_;
      take(1);
      if (c == quote) {
        // A doubled quote is one quote inside.
        if (at_ < text_.size() && text_[at_] == quote)
          take(1);
        else
          return;
      }
    }
  }

  void line_comment() {
    auto end = text_.find('\n', at_);
    take((end == std::string::npos ? text_.size() : end) - at_);
  }

  void block_comment() {
    int opened = line_;
    auto end = text_.find("*/", at_ + 2);
    if (end == std::string::npos)
      fail(opened, "unterminated /* comment");
    for (auto i = at_; i < end; ++i)
      line_ += text_[i] == '\n' ? 1 : 0;
    take(end + 2 - at_);
  }

  /// PostgreSQL's $tag$...$tag$ (a function body): copied whole. False
  /// when the $ starts no such quote (a $1 written by hand).
  bool dollar_quote() {
    auto close = text_.find('$', at_ + 1);
    if (close == std::string::npos)
      return false;
    for (auto i = at_ + 1; i < close; ++i)
      if (!name_char(text_[i]) ||
          (i == at_ + 1 &&
           std::isdigit(static_cast<unsigned char>(text_[i])) != 0))
        return false;
    auto tag = text_.substr(at_, close - at_ + 1);
    auto end = text_.find(tag, close + 1);
    if (end == std::string::npos)
      fail(line_, "unterminated " + tag + " quote");
    mark_start();
    for (auto i = at_; i < end; ++i)
      line_ += text_[i] == '\n' ? 1 : 0;
    take(end + tag.size() - at_);
    return true;
  }

  void parameter() {
    mark_start();
    auto from = at_ + 1;
    auto to = from;
    while (to < text_.size() && (name_char(text_[to]) ||
                                 (text_[to] == '.' && to + 1 < text_.size() &&
                                  name_char(text_[to + 1]))))
      ++to;
    auto name = text_.substr(from, to - from);
    if (!known_parameter(name))
      fail(line_, "unknown parameter :" + name +
                      " (an event gives :event_id, :aggregate_id, :seq, "
                      ":event_type, :payload, :payload.<field>, :headers, "
                      ":headers.<name>)");
    std::size_t number = 0;
    while (number < current_.parameters.size() &&
           current_.parameters[number] != name)
      ++number;
    if (number == current_.parameters.size())
      current_.parameters.push_back(name);
    current_.postgres += "$" + std::to_string(number + 1);
    current_.sqlite += "?" + std::to_string(number + 1);
    at_ = to;
  }

  void finish() {
    if (started_)
      statements_.push_back(std::move(current_));
    current_ = sql_statement{};
    started_ = false;
  }

  const std::string& text_;
  std::size_t at_ = 0;
  int line_;
  const std::string& file_;
  sql_statement current_;
  bool started_ = false;
  std::vector<sql_statement> statements_;
};

/// Whether `text` holds nothing but blanks and comments.
bool only_comments(const std::string& text, int line, const std::string& file) {
  return statement_scanner{text, line, file}.scan().empty();
}

} // namespace

std::vector<std::string> sql_effects::types() const {
  std::vector<std::string> names;
  for (const auto& entry : by_type)
    names.push_back(entry.first);
  return names;
}

const sql_effect* sql_effects::find(const std::string& event_type) const {
  auto found = by_type.find(event_type);
  return found == by_type.end() ? nullptr : &found->second;
}

sql_effects parse_sql_effects(const std::string& text,
                              const std::string& name) {
  sql_effects effects;
  effects.name = name;
  // Sections: [type, header line, body, body's first line].
  struct section {
    std::string type;
    int line;
    std::string body;
  };
  std::vector<section> sections;
  std::string preamble;
  int line = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    auto length = (end == std::string::npos ? text.size() : end) - at;
    auto row = text.substr(at, length);
    ++line;
    auto type = section_type(row);
    if (!type.empty())
      sections.push_back({type, line, {}});
    else
      (sections.empty() ? preamble : sections.back().body) += row + "\n";
    at += length + 1;
  }
  if (!only_comments(preamble, 1, name))
    throw sql_effects_error(name + ":1: a statement before the first "
                                   "`-- effect: <event type>` line");
  if (sections.empty())
    throw sql_effects_error(name + ": no `-- effect: <event type>` section");
  for (auto& s : sections) {
    if (effects.by_type.count(s.type) != 0)
      throw sql_effects_error(name + ":" + std::to_string(s.line) + ": " +
                              s.type + " has an effect already, at line " +
                              std::to_string(effects.by_type[s.type].line));
    auto statements = statement_scanner{s.body, s.line + 1, name}.scan();
    if (statements.empty())
      throw sql_effects_error(name + ":" + std::to_string(s.line) + ": " +
                              s.type + " has no statement");
    effects.by_type[s.type] = {s.type, s.line, std::move(statements)};
  }
  return effects;
}

sql_effects read_sql_effects(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw sql_effects_error("cannot read " + path + ": " +
                            std::strerror(errno));
  std::string text{std::istreambuf_iterator<char>{in},
                   std::istreambuf_iterator<char>{}};
  if (in.bad())
    throw sql_effects_error("cannot read " + path + ": " +
                            std::strerror(errno));
  if (text.size() > max_sql_effects_bytes)
    throw sql_effects_error(
        path + " is " + std::to_string(text.size()) + " bytes, over the " +
        std::to_string(max_sql_effects_bytes) + " an effects file may have");
  try {
    // nlohmann's strict encoder refuses bytes that are not UTF-8.
    (void)nlohmann::json(text).dump();
  } catch (const nlohmann::json::type_error&) {
    throw sql_effects_error(path + " is not UTF-8 text");
  }
  return parse_sql_effects(text, path);
}

} // namespace outbox::sink
