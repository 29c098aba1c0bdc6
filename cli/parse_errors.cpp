#include "cli/parse_errors.hpp"

#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

namespace outbox::cli {

namespace {

/// The (sub)command the parser was in when it stopped: the deepest one
/// parsed. "outbox" itself when none was reached.
const CLI::App* failing_command(const CLI::App& app) {
  for (const auto* command : app.get_subcommands({}))
    if (command->parsed() > 0)
      return failing_command(*command);
  return &app;
}

/// "outbox dead-letters replay".
std::string full_name(const CLI::App* command) {
  std::string name = command->get_name();
  for (auto* parent = command->get_parent(); parent != nullptr;
       parent = parent->get_parent())
    name = parent->get_name() + " " + name;
  return name;
}

/// What a value of an option's type looks like, in words; empty for text.
std::string kind_of_value(const CLI::App* command, const std::string& name) {
  const auto* option = command->get_option_no_throw(name);
  std::string type = option ? option->get_type_name() : "";
  if (type == "INT")
    return "an integer";
  if (type == "UINT")
    return "a whole number (0 or more)";
  if (type == "FLOAT")
    return "a number";
  return "";
}

/// True for an on/off flag (--json), which takes no value.
bool is_flag(const CLI::App* command, const std::string& name) {
  const auto* option = command->get_option_no_throw(name);
  return option != nullptr && option->get_expected_max() == 0;
}

std::string times(const std::string& count) {
  if (count == "2")
    return "twice";
  return count + " times";
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in{text};
  std::vector<std::string> out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

std::string in_quotes(const std::string& value) {
  return "'" + text::escaped(value) + "'";
}

/// Extra words the command did not take: unknown flags and arguments.
/// Edits (insert, delete, replace, swap of neighbours) from `a` to `b`.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(
      a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// The flag of `at` that `typed` most likely meant ("--relay": "--relays"),
/// or "" when none is close: at most 2 edits, and fewer than half its
/// letters.
std::string closest_flag(const CLI::App* at, const std::string& typed) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto* option : at->get_options()) {
    for (const auto& name : option->get_lnames()) {
      auto flag = "--" + name;
      auto distance = edit_distance(typed, flag);
      if (distance < best_distance && distance * 2 < name.size()) {
        best = flag;
        best_distance = distance;
      }
    }
  }
  return best;
}

std::string extras(const CLI::App* at, const std::string& listed,
                   const std::string& command) {
  std::vector<std::string> flags, arguments;
  // CLI11 lists them last first.
  auto given = words(listed);
  std::reverse(given.begin(), given.end());
  for (auto& word : given)
    (word.size() > 1 && word[0] == '-' ? flags : arguments).push_back(word);
  std::string out;
  if (!flags.empty()) {
    out = flags.size() == 1 ? "unknown flag " : "unknown flags ";
    for (std::size_t i = 0; i < flags.size(); ++i) {
      auto flag = flags[i].substr(0, flags[i].find('='));
      out += (i ? ", " : "") + text::escaped(flag);
      if (auto meant = closest_flag(at, flag); !meant.empty())
        out += " (did you mean " + meant + "?)";
    }
    out += " for " + command;
  }
  if (!arguments.empty()) {
    out += out.empty() ? "" : "; ";
    out += command + " does not take ";
    out += arguments.size() == 1 ? "the argument " : "the arguments ";
    for (std::size_t i = 0; i < arguments.size(); ++i)
      out += (i ? " " : "") + in_quotes(arguments[i]);
  }
  return out;
}

std::string lower_first(std::string text) {
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' &&
      (text.size() < 2 || !(text[1] >= 'A' && text[1] <= 'Z')))
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}

/// The sentence for one error, without "outbox: " and the help pointer.
std::string sentence(const CLI::App* at, const std::string& command,
                     const CLI::ParseError& error) {
  const std::string what = error.what();
  std::smatch m;
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error)) {
    static const std::regex at_most{
        R"(^(\S+): At Most \d+ required but received (\d+)$)"};
    static const std::regex missing{R"(^(\S+): \d+ required (\S+) missing$)"};
    static const std::regex exactly{
        R"(^Expected (exactly|at least) (\d+) arguments to (\S+), got (\d+)$)"};
    if (std::regex_match(what, m, at_most))
      return m[1].str() + " given " + times(m[2].str());
    if (std::regex_match(what, m, missing)) {
      auto kind = kind_of_value(at, m[1].str());
      return m[1].str() + " needs a value" + (kind.empty() ? "" : ": " + kind);
    }
    if (std::regex_match(what, m, exactly))
      return m[3].str() + " takes " + m[1].str() + " " + m[2].str() +
             " values, got " + m[4].str();
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error)) {
    static const std::regex convert{R"(^Could not convert: (\S+) = (.*)$)"};
    static const std::regex allowed{
        R"(^The value (.*) is not an allowed value for (\S+)$)"};
    static const std::regex flag{
        R"(^(\S+): (too many inputs for a flag|Should be true/false or a number)$)"};
    std::string name, value;
    if (std::regex_match(what, m, convert))
      name = m[1].str(), value = m[2].str();
    else if (std::regex_match(what, m, allowed))
      name = m[2].str(), value = m[1].str();
    if (!name.empty() && is_flag(at, name))
      return name + " is a flag and takes no value, got " + in_quotes(value);
    if (!name.empty()) {
      auto kind = kind_of_value(at, name);
      return name + " expects " + (kind.empty() ? "another value" : kind) +
             ", got " + in_quotes(value);
    }
    if (std::regex_match(what, m, flag))
      return m[1].str() + " is a flag and takes no value";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error)) {
    static const std::regex required{R"(^(\S+) is required$)"};
    if (what == "A subcommand is required")
      return "no command given";
    if (std::regex_match(what, m, required))
      return command + " needs " + m[1].str();
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    static const std::regex extra{
        R"(^The following arguments? (was|were) not expected: (.*)$)"};
    if (std::regex_match(what, m, extra))
      return extras(at, m[2].str(), command);
  }
  if (dynamic_cast<const CLI::ValidationError*>(&error)) {
    static const std::regex invalid{R"(^(\S+): (.*)$)"};
    if (std::regex_match(what, m, invalid))
      return m[1].str() + ": " + lower_first(m[2].str());
  }
  return lower_first(what);
}

} // namespace

std::string parse_error_message(const CLI::App& app,
                                const CLI::ParseError& error) {
  const auto* at = failing_command(app);
  auto command = full_name(at);
  auto line = "outbox: " + text::escaped(sentence(at, command, error));
  if (at == &app) {
    line += " (commands:";
    for (const auto* each : app.get_subcommands({}))
      line += " " + each->get_name();
    line += "; see outbox --help)";
  } else {
    line += " (see " + command + " --help)";
  }
  return line;
}

} // namespace outbox::cli
