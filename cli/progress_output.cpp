#include "cli/progress_output.hpp"

#include "actors/progress_line.hpp"

#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>

namespace outbox::cli {

namespace {

/// The terminal's width in columns, read at each refresh (so a resized
/// window is followed without a SIGWINCH handler); 80 when unknown.
std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 80;
}

} // namespace

/// Progress on stderr: on a terminal, one line redrawn in place once a
/// second and fitted to its width (a longer one would wrap and leave a copy
/// behind at every refresh). Elsewhere (a service's log, a pipe) no
/// progress line: its figures at info every log.summary_interval_ms, one
/// log line each, and none at all where the log drops info lines. Not
/// asked for in vain: the counts behind a line read the database's backlog
/// (on PostgreSQL a relay process's first count of a 200k-row backlog took
/// the server 0.6 s, inside the bench's timed window).
void show_progress(pipeline::pipeline_hooks& hooks, const config::settings& s) {
  if (::isatty(STDERR_FILENO) != 0) {
    hooks.progress = [](const actors::run_progress& progress) {
      std::cerr << "\r\033[K"
                << actors::progress_text(progress, terminal_columns())
                << std::flush;
    };
    return;
  }
  if (!spdlog::should_log(spdlog::level::info))
    return;
  hooks.progress_interval_ms = s.log.summary_interval_ms;
  hooks.progress = [](const actors::run_progress& progress) {
    spdlog::info("summary: {}", actors::progress_text(progress, 0));
  };
}

/// On a terminal, ends the progress line drawn in place, so that what
/// follows starts a line of its own.
void end_progress_line() {
  if (::isatty(STDERR_FILENO) != 0)
    std::cerr << '\n';
}

} // namespace outbox::cli
