#pragma once

// What `outbox run` shows of its progress on stderr while it runs: a line
// redrawn in place on a terminal, summary log lines elsewhere.

#include "config/settings.hpp"
#include "pipeline/spawn_pipeline.hpp"

namespace outbox::cli {

/// Sets `hooks`' progress callback for stderr: on a terminal, one line
/// redrawn in place and fitted to its width; elsewhere its figures at info
/// every log.summary_interval_ms, or none where the log drops info lines.
void show_progress(pipeline::pipeline_hooks& hooks, const config::settings& s);

/// On a terminal, ends the progress line drawn in place, so that what
/// follows starts a line of its own.
void end_progress_line();

} // namespace outbox::cli
