#pragma once

#include <string>

namespace CLI {
class App;
class ParseError;
} // namespace CLI

namespace outbox::cli {

/// The command line's mistake in the tool's own words, for stderr: one
/// line starting "outbox: " that names the flag and the command (`--redis
/// given twice (see outbox run --help)`) instead of CLI11's wording (`At
/// Most 1 required but received 2`). Values from the command line are
/// escaped. `app` is the top-level app, after parse() threw `error`.
std::string parse_error_message(const CLI::App& app,
                                const CLI::ParseError& error);

} // namespace outbox::cli
