#include "sink/sql_effects.hpp"

#include "text/utf8_file.hpp"

#include <cctype>
#include <cstring>

namespace outbox::sink {

namespace {

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

std::string lowered(std::string text) {
  for (auto& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// Reads the whole file in one pass, as the database would lex it: a
/// section header is a line `-- effect: <type>` outside any quote or
/// comment; statements end at `;` outside them; parameters are numbered
/// per statement.
class effects_scanner {
public:
  effects_scanner(const std::string& text, const std::string& file)
      : text_(text), file_(file) {}

  sql_effects scan() {
    effects_.name = file_;
    while (at_ < text_.size()) {
      if (line_start_ && header())
        continue;
      line_start_ = false;
      char c = text_[at_];
      if (c == '\n') {
        take(1);
        ++line_;
        line_start_ = true;
      } else if (c == '\'' || c == '"') {
        quoted(c, false);
      } else if ((c == 'E' || c == 'e') && next_is('\'') && !after_name()) {
        mark_start();
        take(1);
        quoted('\'', true);
      } else if (c == '-' && next_is('-')) {
        line_comment();
      } else if (c == '/' && next_is('*')) {
        block_comment();
      } else if (c == '$' && !after_name() && dollar_quote()) {
        // Consumed by dollar_quote().
      } else if (c == ':' && next_is(':')) {
        mark_start();
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
    end_section();
    if (!seen_section_)
      throw sql_effects_error(file_ + ": no `-- effect: <event type>` section");
    return std::move(effects_);
  }

private:
  bool next_is(char c) const {
    return at_ + 1 < text_.size() && text_[at_ + 1] == c;
  }

  /// Whether the character before the cursor continues a name (a$b is
  /// one identifier, E'...' after a name is not an escape string).
  bool after_name() const { return at_ > 0 && name_char(text_[at_ - 1]); }

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw sql_effects_error(file_ + ":" + std::to_string(line) + ": " + why);
  }

  /// At a line's start: a section header starts a new section (true, the
  /// line consumed). A line that looks like one and is not is refused,
  /// since its statements would join the previous type's effect.
  bool header() {
    auto end = text_.find('\n', at_);
    auto line = text_.substr(
        at_, (end == std::string::npos ? text_.size() : end) - at_);
    if (line.rfind("--", 0) != 0)
      return false;
    // A header, or a near miss (`-- Effect: X`, `--effect: X`): "effect"
    // then a colon. Other comments may start with "effects ...".
    auto rest = line.substr(2);
    auto first = rest.find_first_not_of(" \t");
    auto words = lowered(first == std::string::npos ? "" : rest.substr(first));
    auto colon = words.find_first_not_of(" \t", 6);
    if (words.rfind("effect", 0) != 0 || colon == std::string::npos ||
        words[colon] != ':')
      return false;
    static const std::string mark = "-- effect:";
    std::string type;
    if (line.rfind(mark, 0) == 0) {
      auto from = line.find_first_not_of(" \t", mark.size());
      auto to = line.find_last_not_of(" \t\r");
      if (from != std::string::npos && to >= from)
        type = line.substr(from, to - from + 1);
    }
    if (type.empty() || type.find_first_of(" \t") != std::string::npos)
      fail(line_, "`" + line +
                      "` is not a section header: write `-- effect: "
                      "<event type>` (a comment may not start with "
                      "\"effect\")");
    finish();
    end_section();
    if (effects_.by_type.count(type) != 0)
      fail(line_, type + " has an effect already, at line " +
                      std::to_string(effects_.by_type[type].line));
    section_ = sql_effect{type, line_, {}};
    seen_section_ = true;
    in_section_ = true;
    at_ = end == std::string::npos ? text_.size() : end;
    return true;
  }

  void end_section() {
    if (!in_section_)
      return;
    if (section_.statements.empty())
      fail(section_.line, section_.event_type + " has no statement");
    auto type = section_.event_type;
    effects_.by_type[type] = std::move(section_);
    section_ = sql_effect{};
    in_section_ = false;
  }

  void mark_start() {
    if (started_)
      return;
    if (!in_section_)
      fail(line_, "a statement before the first `-- effect: <event type>` "
                  "line");
    started_ = true;
    current_.line = line_;
  }

  /// Copies `n` characters to both texts; blanks before anything of a
  /// statement are skipped (a comment before it is kept: a planner hint
  /// must open the query).
  void take(std::size_t n) {
    auto piece = text_.substr(at_, n);
    if (!started_ && current_.postgres.empty() &&
        piece.find_first_not_of(" \t\r\n") == std::string::npos) {
      at_ += n;
      return;
    }
    current_.postgres += piece;
    current_.sqlite += piece;
    at_ += n;
  }

  /// Copies text up to `end` (exclusive), counting its lines.
  void take_until(std::size_t end) {
    for (auto i = at_; i < end; ++i)
      line_ += text_[i] == '\n' ? 1 : 0;
    take(end - at_);
  }

  void quoted(char quote, bool escapes) {
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
      if (escapes && c == '\\' && at_ + 1 < text_.size()) {
        line_ += text_[at_ + 1] == '\n' ? 1 : 0;
        take(2);
        continue;
      }
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

  /// /* ... */, nested as PostgreSQL nests them.
  void block_comment() {
    int opened = line_;
    int depth = 0;
    auto i = at_;
    while (i < text_.size()) {
      if (text_.compare(i, 2, "/*") == 0) {
        ++depth;
        i += 2;
      } else if (text_.compare(i, 2, "*/") == 0) {
        i += 2;
        if (--depth == 0)
          break;
      } else {
        ++i;
      }
    }
    if (depth != 0)
      fail(opened, "unterminated /* comment");
    take_until(i);
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
    take_until(end + tag.size());
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
    // Comments alone make no statement.
    if (started_)
      section_.statements.push_back(std::move(current_));
    current_ = sql_statement{};
    started_ = false;
  }

  const std::string& text_;
  const std::string& file_;
  std::size_t at_ = 0;
  int line_ = 1;
  bool line_start_ = true;
  sql_statement current_;
  bool started_ = false;
  sql_effect section_;
  bool in_section_ = false;
  bool seen_section_ = false;
  sql_effects effects_;
};

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
  return effects_scanner{text, name}.scan();
}

sql_effects read_sql_effects(const std::string& path) {
  std::string text;
  try {
    text = text::read_utf8_file(path, max_sql_effects_bytes, "an effects file");
  } catch (const text::utf8_file_error& e) {
    throw sql_effects_error(e.what());
  }
  return parse_sql_effects(text, path);
}

} // namespace outbox::sink
