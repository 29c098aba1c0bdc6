#pragma once

namespace outbox::cli {

/// Whether a command that prints one result prints it as JSON: with
/// --json, and whenever stdout is not a terminal (a pipe, a file), so
/// scripts keep the JSON they always got; a person at a terminal gets a
/// sentence instead.
bool prints_json(bool json_flag);

} // namespace outbox::cli
