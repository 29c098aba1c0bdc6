#pragma once

namespace outbox::cli {

/// Parses the command line, runs the command and returns the exit code.
int run_app(int argc, char** argv);

} // namespace outbox::cli
